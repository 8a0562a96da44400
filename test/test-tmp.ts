/*
 * One temp directory for a whole run of the test suite, made by vitest.config.ts as the run starts
 * and given to every test file as TMPDIR (the workers inherit it), and one under /var/tmp for
 * what a sandbox must see (test/scratch.ts). Tests make their folders with
 * `mkdtemp(tmpdir())`, and some leave them: a hook that never ran, a child that outlived its test,
 * a folder a test forgot. Before this, every run of the suite left about 25 in `/tmp`; now
 * whatever a test leaves goes with the run's directory when the run ends. A run that is killed
 * leaves its directory, and the next run removes those of runs whose process is gone (core's
 * process folders).
 *
 * The directory lies in the temp directory the run was started with (`/tmp` here), so what tests
 * say about paths under the host's `/tmp` stays true, and has `/tmp`'s mode (1777), so children a
 * test runs as another user reach what it made there. AALIS_TEST_TMP=keep keeps it (its path is
 * printed at the end) for a look at what the tests left.
 *
 * `pnpm bench` (test/bench/run.ts) does the same for its benches, with its own prefix: they make
 * their folders as tests do, and left some in `/tmp` at every run, all of them when killed.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename } from 'node:path';
import { makeProcessDir } from '../packages/core/src/process-dirs.js';

/** The prefix of a test run's folders: `<tmp>/aalis-test-run-<pid>-XXXXXX`, and the same under /var/tmp. */
export const TEST_TMP_PREFIX = 'aalis-test-run-';

/** The prefix of a `pnpm bench` run's folders (test/bench/run.ts): benchmarks make theirs as tests do, and left them too. */
export const BENCH_TMP_PREFIX = 'aalis-bench-run-';

const RUN_PREFIXES = [TEST_TMP_PREFIX, BENCH_TMP_PREFIX] as const;

/** Where the tests make what a sandbox must see (its /tmp is private): test/scratch.ts. */
const VAR_TMP = '/var/tmp';

/**
 * Removes a folder the tests made. Tests mount things (a tmpfs, an overlay), and one killed midway
 * may leave a mount in it: the removal never crosses into another file system (`rm
 * --one-file-system`, and the folders a test sealed, mode 000 as an overlay leaves its work
 * directory, opened by a `find -xdev` first).
 */
function removeTree(dir: string): void {
  try {
    execFileSync('find', [dir, '-xdev', '-type', 'd', '!', '-perm', '-u=rwx', '-exec', 'chmod', 'u+rwx', '{}', '+'], { stdio: 'ignore' });
  } catch {
    // what cannot be opened is left for rm to report
  }
  try {
    execFileSync('rm', ['-rf', '--one-file-system', '--', dir], { stdio: 'pipe' });
  } catch (error) {
    process.stderr.write(`${dir}, left by the tests, was not removed whole: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}\n`);
  }
}

/** Removes the run's temp directory at its end, unless AALIS_TEST_TMP=keep. */
function removeRunDir(dir: string): void {
  if (process.env.AALIS_TEST_TMP === 'keep') {
    process.stdout.write(`the run's temp directory is kept: ${dir}\n`);
    return;
  }
  removeTree(dir);
}

/** Makes a run's folder in `parent` (`<parent>/<prefix><pid>-XXXXXX`), with `/tmp`'s mode: tests run children as another user (nobody) on folders made there. */
function runFolder(parent: string, prefix: string): string {
  const dir = makeProcessDir(parent, prefix, removeRunDir);
  chmodSync(dir, 0o1777);
  return dir;
}

/**
 * Points TMPDIR, and AALIS_TEST_SCRATCH (test/scratch.ts: the folders a sandbox must see, outside
 * /tmp), at this run's own folders, made now and removed when this process exits. A process
 * started inside a run (a test that runs vitest, a bench inside `pnpm bench`) keeps the run's
 * folders. `prefix` names the kind of run: {@link TEST_TMP_PREFIX} (vitest.config.ts) or
 * {@link BENCH_TMP_PREFIX} (test/bench/run.ts).
 */
export function useTestTmp(prefix: string = TEST_TMP_PREFIX): void {
  if (RUN_PREFIXES.some((p) => basename(tmpdir()).startsWith(p))) return;
  process.env.TMPDIR = runFolder(tmpdir(), prefix);
  if (existsSync(VAR_TMP)) process.env.AALIS_TEST_SCRATCH = runFolder(VAR_TMP, prefix);
}

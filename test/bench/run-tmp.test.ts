import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const TEST_TMP = join(import.meta.dirname, '..', 'test-tmp.ts');
const parent = mkdtempSync(join(tmpdir(), 'aalis-run-tmp-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));
/** A folder's entries but the TypeScript loader's cache (`tsx-<uid>`, made in TMPDIR as the child starts, before the helper runs). */
const left = (dir: string) => readdirSync(dir).filter((n) => !n.startsWith('tsx-'));

/**
 * A process that takes a run's folders as `pnpm bench` does (test/bench/run.ts), leaves a folder
 * in each as a bench would (one sealed, mode 000, as an overlay's work directory is), and prints
 * where they were. The real helper in a child: it removes the folders as that process exits.
 */
function benchRun(tmp: string, scratch?: string): { tmp: string; scratch: string } {
  const code = [
    `import { mkdirSync, chmodSync, mkdtempSync } from 'node:fs';`,
    `import { tmpdir } from 'node:os';`,
    `import { join } from 'node:path';`,
    `const { useTestTmp, BENCH_TMP_PREFIX } = await import(${JSON.stringify(TEST_TMP)});`,
    `useTestTmp(BENCH_TMP_PREFIX);`,
    `for (const d of [tmpdir(), process.env.AALIS_TEST_SCRATCH]) { const left = mkdtempSync(join(d, 'a-bench-')); mkdirSync(join(left, 'sealed')); chmodSync(join(left, 'sealed'), 0); }`,
    `console.log(JSON.stringify({ tmp: tmpdir(), scratch: process.env.AALIS_TEST_SCRATCH }));`,
  ].join('\n');
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
  if (scratch === undefined) delete env.AALIS_TEST_SCRATCH;
  else env.AALIS_TEST_SCRATCH = scratch;
  delete env.AALIS_TEST_TMP;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { env, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as { tmp: string; scratch: string };
}

describe("pnpm bench's temp folders: what its benches leave goes with the run", { timeout: 90_000 }, () => {
  it('gives the run its own TMPDIR and scratch folder, and removes both, with what was left in them, as it exits', () => {
    const tmp = mkdtempSync(join(parent, 'tmp-'));
    const seen = benchRun(tmp);
    expect(basename(seen.tmp)).toMatch(/^aalis-bench-run-\d+-[A-Za-z0-9]{6}$/);
    expect(join(seen.tmp, '..')).toBe(tmp);
    expect(basename(seen.scratch)).toMatch(/^aalis-bench-run-\d+-[A-Za-z0-9]{6}$/);
    expect(existsSync(seen.tmp)).toBe(false);
    expect(existsSync(seen.scratch)).toBe(false);
    expect(left(tmp)).toEqual([]);
  });

  it('keeps the folders of the run it was started in (a bench or a test started inside a run)', () => {
    const outer = mkdtempSync(join(parent, 'aalis-test-run-1-'));
    const outerScratch = mkdtempSync(join(parent, 'scratch-'));
    const seen = benchRun(outer, outerScratch);
    expect(seen).toEqual({ tmp: outer, scratch: outerScratch });
    expect(left(outer)).toEqual([expect.stringMatching(/^a-bench-/)]);
    expect(left(outerScratch)).toEqual([expect.stringMatching(/^a-bench-/)]);
  });
});

// `aalis exec` from its single-file bundle (scripts/bundle.mjs), the form bin/aalis.cjs runs: built
// here into .aalis-tmp/ (two levels under packages/, where dist/ is, so it finds the install as
// dist/ would), then run through bin/exec-loader.mjs, as bin/aalis.cjs runs it, as root and as an
// unprivileged user in real bubblewrap sandboxes.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXEC_PHASES } from './exec-phases.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

const here = join(import.meta.dirname, '..');
const out = join(here, '.aalis-tmp');
const bundle = join(out, `aalis-exec-${process.pid}.cjs`);
// what bin/aalis.cjs does for `aalis exec`, with this bundle
const runner = join(out, `run-exec-${process.pid}.mjs`);
const loader = join(here, 'bin', 'exec-loader.mjs');
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-exec-bundle-')));
const NOBODY = 65534;
let inputs: string[] = [];

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  const { bundleExec } = (await import(join(here, 'scripts', 'bundle.mjs'))) as { bundleExec(outfile: string): Promise<{ inputs: string[] }> };
  ({ inputs } = await bundleExec(bundle));
  writeFileSync(runner, `import { runExec } from ${JSON.stringify(loader)};\nrunExec(${JSON.stringify(bundle)});\n`);
}, 120_000);
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  for (const f of [bundle, `${bundle}.cache`, runner]) rmSync(f, { force: true });
});

/** Whether V8 took the code cache beside `file`, asked in a plain node (no flags of this runner). */
function cacheTaken(file: string): boolean {
  const probe = `import(${JSON.stringify(loader)}).then((m) => process.stdout.write(String(m.compileExec(${JSON.stringify(file)}).cached)))`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout === 'true';
}

/** A workspace, an outside directory and a data directory, owned by `uid`. */
function scene(name: string, uid = 0) {
  const dir = join(root, name);
  const s = { dir, workspace: join(dir, 'workspace'), outside: join(dir, 'outside'), data: join(dir, 'data'), home: join(dir, 'home') };
  for (const d of [dir, s.workspace, s.outside, s.home]) {
    mkdirSync(d, { recursive: true });
    if (uid !== 0) spawnSync('chown', [`${uid}:${uid}`, d]);
  }
  chmodSync(root, 0o755);
  return s;
}

function execBundle(s: ReturnType<typeof scene>, args: string[], uid = 0, options: { env?: Record<string, string>; wrap?: string[]; nodeArgs?: string[] } = {}) {
  const argv = [...(options.wrap ?? []), process.execPath, ...(options.nodeArgs ?? []), runner, 'exec', ...args];
  const [cmd, ...rest] = uid === 0 ? argv : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...argv];
  const result = spawnSync(cmd!, rest, {
    cwd: s.workspace,
    // no NODE_OPTIONS: the bundle needs no loader and no condition, as a user runs it
    env: { PATH: process.env.PATH, HOME: s.home, AALIS_DATA: s.data, ...options.env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const unprivileged = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

describe('the aalis exec bundle', () => {
  it('is one file: it loads no @aalis package from outside itself', () => {
    const text = readFileSync(bundle, 'utf8');
    // strict from its first line, as the ES modules it is made of were
    expect(text.startsWith('"use strict";\n')).toBe(true);
    expect(text).not.toMatch(/(?:from|import\()\s*["']@aalis\//);
    expect(text).not.toMatch(/(?:from|import\()\s*["'](?:zod|execa)["']/);
  });

  it('runs from its code cache, and never from a cache made for other source', () => {
    expect(cacheTaken(bundle)).toBe(true);
    // the same length, one byte changed: V8 alone would take the cache (it checks the length)
    const other = join(root, 'tampered.cjs');
    const code = readFileSync(bundle, 'utf8');
    const at = code.indexOf('aalis exec: run one command');
    writeFileSync(other, `${code.slice(0, at)}b${code.slice(at + 1)}`);
    copyFileSync(`${bundle}.cache`, `${other}.cache`);
    expect(readFileSync(other).length).toBe(readFileSync(bundle).length);
    expect(cacheTaken(other)).toBe(false);
  });

  it('is ASCII, read as one-byte text, and its cache was made after a run: larger than a cache of the compile alone', async () => {
    const bytes = readFileSync(bundle);
    expect(bytes.every((b) => b < 0x80)).toBe(true);
    const { readExec, wrapExec } = (await import(loader)) as { readExec(file: string): { code: string }; wrapExec(code: string): string };
    expect(readExec(bundle).code).toBe(bytes.toString('utf8'));
    // V8 compiles a function at its first call: a cache taken right after the compile has the top
    // level only, the one taken after `exec --help` also every function that run compiled
    const compileOnly = new Script(wrapExec(readExec(bundle).code), { filename: bundle }).createCachedData();
    expect(readFileSync(`${bundle}.cache`).length - 32).toBeGreaterThan(compileOnly.length * 1.2);
  });

  it("holds zod's English messages and none of its other languages", () => {
    const locales = inputs.filter((i) => /zod\/v4\/locales\/(?!index\.js$)/.test(i)).map((i) => i.replace(/.*\//, ''));
    expect(locales).toEqual(['en.js']);
  });

  it.each([
    ['root', 0],
    ...(unprivileged ? [['an unprivileged user', NOBODY] as const] : []),
  ] as const)('as %s: runs in the sandbox, keeps a write in the workspace, and the kernel refuses one outside', (_who, uid) => {
    const s = scene(`run-${uid}`, uid);
    const ok = execBundle(s, ['--network', 'off', '--', 'sh', '-c', 'echo made > in.txt; echo out; exit 7'], uid);
    expect(ok.stderr).not.toMatch(/\n\s+at /);
    expect(ok.status).toBe(7);
    expect(ok.stdout).toBe('out\n');
    expect(readFileSync(join(s.workspace, 'in.txt'), 'utf8')).toBe('made\n');

    const target = join(s.outside, 'refused.txt');
    const refused = execBundle(s, ['--', 'sh', '-c', `echo x > ${target}`], uid);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('Read-only file system');
    expect(refused.stderr).toContain('no terminal to ask on');
    expect(existsSync(target)).toBe(false);
  }, 120_000);

  // strace counts the probe's processes; without it the test says it was skipped rather than pass on nothing
  it.skipIf(!existsSync('/usr/bin/strace'))('probes early and once, leaves no probe directory behind, and probes nothing while its cache is fresh, until the machine changes', () => {
    const s = scene('warm');
    const run = (tmp: string, name: string) => {
      mkdirSync(tmp, { recursive: true });
      const trace = join(s.dir, `${name}.txt`);
      const result = execBundle(s, ['--network', 'off', '--', 'true'], 0, { env: { TMPDIR: tmp }, wrap: ['/usr/bin/strace', '-f', '-qq', '-s', '4096', '-e', 'trace=execve', '-o', trace] });
      expect(result.status).toBe(0);
      // waited for before the exit: nothing of the probe is left in the temp directory
      expect(readdirSync(tmp).filter((n) => n.startsWith('aalis-overlay-probe-'))).toEqual([]);
      const execs = readFileSync(trace, 'utf8').split('\n').filter((l) => /execve\(/.test(l) && !/ENOENT/.test(l));
      return {
        overlayMounts: execs.filter((l) => /execve\("[^"]*mount", .*aalis-overlay-probe-/.test(l)).length,
        // the probe's bubblewraps: its version check and its two `true` sandboxes (the run's has --chdir)
        probeBwraps: execs.filter((l) => /execve\("[^"]*bwrap", /.test(l) && !l.includes('"--chdir"')).length,
      };
    };
    const tmp = join(s.dir, 'tmp');
    expect(run(tmp, 'first')).toEqual({ overlayMounts: 1, probeBwraps: 3 });
    // a later process, the cache fresh (data/cache/linux-probe.json): no probe at all
    expect(run(tmp, 'cached')).toEqual({ overlayMounts: 0, probeBwraps: 0 });
    // another temp directory is another place to mount in: the probe runs again
    expect(run(join(s.dir, 'tmp2'), 'moved')).toEqual({ overlayMounts: 1, probeBwraps: 3 });
  }, 180_000);

  it("marks its phases in order, which bench/startup.ts's preload reads at exit", () => {
    const s = scene('phases');
    const log = join(s.dir, 'phases.jsonl');
    const result = execBundle(s, ['--network', 'off', '--', 'true'], 0, { env: { AALIS_BENCH_PHASES: log }, nodeArgs: ['-r', join(here, 'bench', 'phase-marks.cjs')] });
    expect(result.status).toBe(0);
    const marks = JSON.parse(readFileSync(log, 'utf8')) as Record<string, number>;
    const order = ['bootstrap', 'compiled', ...EXEC_PHASES, 'exit'];
    expect(Object.keys(marks).sort()).toEqual([...order].sort());
    const times = order.map((m) => marks[m]!);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  }, 120_000);

  it('compiles no code from strings on a run (zod jitless: a one-shot would pay each parser it generates and use it once)', () => {
    const s = scene('jitless');
    const count = join(s.dir, 'functions.txt');
    // counts every Function made from a string, as zod's generated parsers are made
    const preload = join(s.dir, 'count-functions.cjs');
    writeFileSync(
      preload,
      `'use strict';\nlet made = 0;\nglobalThis.Function = new Proxy(Function, { construct(t, a) { made++; return Reflect.construct(t, a); }, apply(t, self, a) { made++; return Reflect.apply(t, self, a); } });\nprocess.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(count)}, String(made)));\n`,
    );
    const result = execBundle(s, ['--network', 'off', '--', 'true'], 0, { nodeArgs: ['-r', preload] });
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.status).toBe(0);
    expect(readFileSync(count, 'utf8')).toBe('0');
  }, 120_000);

  it.each([
    [['--tier', 'root', '--', 'true'], 2, "--tier 'root' is not accepted"],
    [[], 2, 'no command given'],
    [['--cwd', '/nonexistent-aalis-dir', '--', 'true'], 2, "--cwd '/nonexistent-aalis-dir' is not an existing directory"],
  ])('%j is refused with a clear error and no stack trace', (args, status, message) => {
    const result = execBundle(scene('usage'), args);
    expect(result.status).toBe(status);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("Run 'aalis exec --help' for the options.");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('--help prints the exec help', () => {
    const result = execBundle(scene('help'), ['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^aalis exec: run one command/);
  });
});

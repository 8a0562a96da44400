import { execFileSync } from 'node:child_process';
import { execa } from 'execa';
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostModel, probeOverlay } from './overlay-mount.js';
import { makeScene, req, type Scene, until, untilProcess, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * Writes captured in an overlay, judged, then committed (issue 13; the host model, docs/threat-model.md): each case a
 * real sandboxed process, as root. The same as `nobody`: overlay-unprivileged.test.ts.
 */

const MODEL = (process.env.AALIS_TEST_HOST_MODEL ?? 'overlay') as HostModel; // `look` shows which cases fail on the old model
const bytes = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
const FF = Buffer.of(0xff);

let s: Scene;
let outside: string;
beforeAll(async () => {
  s = makeScene();
  outside = join(s.root, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'keep.txt'), 'outside\n');
  expect((await probeOverlay('/tmp')).ok).toBe(true);
});
afterAll(() => execFileSync('rm', ['-rf', s.root])); // rm walks deeper than PATH_MAX

const sandbox = (extra: Parameters<typeof createLinuxSandbox>[0] = {}) => createLinuxSandbox({ hostModel: MODEL, landingSweepMs: 0, undoneDir: join(s.root, 'undone'), ...extra });
const policy = (extra: Partial<SandboxPolicy> = {}) => workspacePolicy(s, extra);

/** Polls `paths` every few milliseconds while `run` goes on; returns those ever seen on the host. */
async function watch<T>(paths: readonly string[], run: () => Promise<T>): Promise<{ result: T; seen: string[]; polls: number }> {
  const seen = new Set<string>();
  let polls = 0;
  let done = false;
  const poller = (async () => {
    while (!done) {
      for (const p of paths) if (existsSync(p)) seen.add(p);
      polls += 1;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const result = await run();
  done = true;
  await poller;
  return { result, seen: [...seen], polls };
}

describe('the overlay: nothing lands on the host that the policy has not judged', { timeout: 120_000 }, () => {
  it('a landing is never visible on the host, during the run or after; it is reported by its exact path', async () => {
    mkdirSync(join(s.ws, 'pkg'), { recursive: true });
    const landings = ['pkg/.envrc', 'pkg/.github/workflows/ci.yml', 'pkg/.git/hooks/pre-commit', 'pkg/.vscode/tasks.json'].map((p) => join(s.ws, p));
    const script = `for f in ${landings.map((l) => `'${l}'`).join(' ')}; do mkdir -p "$(dirname "$f")"; echo planted > "$f"; done; echo ok > pkg/fine.txt; sleep 1.5`;
    const { result: r, seen, polls } = await watch(landings, () => sandbox().run(req(s, ['sh', '-c', script], { policy: policy() })));
    expect(polls).toBeGreaterThan(20); // the watcher did look while the command slept
    expect(seen).toEqual([]);
    for (const l of landings) expect(existsSync(l), l).toBe(false);
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'pkg/fine.txt'), 'utf8')).toBe('ok\n');
    expect(r.writeDenied).toBe(true);
    expect([...r.deniedWrites].sort()).toEqual(expect.arrayContaining(landings));
    // kept off the host, as data; stderr gets one summary line instead of the list of paths
    expect(r.movedAside).toEqual(expect.arrayContaining(landings.map((path) => ({ path, reason: 'kept-off' }))));
    expect(r.stderr).toContain("entries this command wrote were moved aside or removed by the sandbox (the result's movedAside names each)\n");
    expect(r.stderr).not.toContain('were kept off the host');
  });

  // The overlay captures every write, so the placeholders of the look (placeholders.ts) would only
  // cost a mount and a host directory per missing name: none is made, inside or on the host, and a
  // new landing at such a name in the cwd is refused at the commit like any other.
  it.skipIf(MODEL !== 'overlay')('makes no placeholders: the missing landing names stay missing on the host and inside, and a new one is refused at the commit', async () => {
    const names = ['.envrc', '.vscode', '.claude', 'AGENTS.md', '.github'].map((n) => join(s.ws, n));
    for (const n of names) expect(existsSync(n), n).toBe(false);
    const script = `ls -A; sleep 0.5; echo x > .envrc; mkdir -p .github/workflows && echo y > .github/workflows/ci.yml`;
    const { result: r, seen } = await watch(names, () => sandbox().run(req(s, ['sh', '-c', script], { policy: policy() })));
    expect(seen).toEqual([]); // before: the placeholders stood in the workspace while the command ran
    const inside = r.stdout.trim().split('\n');
    for (const n of ['.envrc', '.vscode', '.claude', 'AGENTS.md', '.github']) expect(inside, n).not.toContain(n);
    expect(r.exitCode).toBe(0); // the writes succeeded inside, into the upper layer
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites).toContain(join(s.ws, '.envrc'));
    expect(r.deniedWrites.some((p) => p.startsWith(join(s.ws, '.github')))).toBe(true);
    for (const n of names) expect(existsSync(n), n).toBe(false);
  });

  it('allowed writes, appends, deletes, directory renames and a directory replaced whole land after the run', async () => {
    const w = (p: string, c: string) => {
      mkdirSync(join(s.ws, p, '..'), { recursive: true });
      writeFileSync(join(s.ws, p), c);
    };
    w('keep/a.txt', 'one\n');
    w('gone.txt', 'bye\n');
    w('dir1/x/y.txt', 'moved\n');
    w('redo/old.txt', 'old\n');
    w('gonedir/z/z.txt', 'z\n');
    const script = [
      'echo two >> keep/a.txt',
      'rm gone.txt',
      'mv dir1 dir2',
      'mkdir -p new/deep && echo new > new/deep/f.txt',
      'rm -rf redo && mkdir redo && echo fresh > redo/new.txt',
      'rm -rf gonedir',
      'ln -s keep/a.txt link',
      'chmod 600 keep/a.txt',
    ].join(' && ');
    const r = await sandbox().run(req(s, ['sh', '-c', script], { policy: policy() }));
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'keep/a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(statSync(join(s.ws, 'keep/a.txt')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(s.ws, 'gone.txt'))).toBe(false);
    expect(existsSync(join(s.ws, 'dir1'))).toBe(false);
    expect(readFileSync(join(s.ws, 'dir2/x/y.txt'), 'utf8')).toBe('moved\n');
    expect(readFileSync(join(s.ws, 'new/deep/f.txt'), 'utf8')).toBe('new\n');
    expect(readdirSync(join(s.ws, 'redo'))).toEqual(['new.txt']); // the old entries went with the old directory
    expect(existsSync(join(s.ws, 'gonedir'))).toBe(false);
    expect(readlinkSync(join(s.ws, 'link'))).toBe('keep/a.txt');
    expect(r.writeDenied).toBe(false);
  });

  it('a write through a hard link to a protected inode leaves that inode unchanged', async () => {
    const control = join(s.control, 'state.json');
    const alias = join(s.ws, 'alias.json');
    linkSync(control, alias);
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo changed > alias.json'], { policy: policy() }));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(control, 'utf8')).toBe('{}\n');
    expect(readFileSync(alias, 'utf8')).toBe('changed\n'); // the workspace's name got a new inode
    expect(statSync(alias).ino).not.toBe(statSync(control).ino);
  });

  it('hard links the command makes are committed as files of their own: no committed name shares an inode with another', async () => {
    // an approved landing committed later (kept-writes.ts) was still a link of a plain file the
    // first commit had put on the host: a later edit of the plain file changed the approved hook
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo first > linked-a.txt && ln linked-a.txt linked-b.txt && mkdir -p linked && ln linked-a.txt linked/c.txt'], { policy: policy() }));
    expect(r.exitCode).toBe(0);
    const names = ['linked-a.txt', 'linked-b.txt', 'linked/c.txt'].map((n) => join(s.ws, n));
    for (const n of names) expect(readFileSync(n, 'utf8')).toBe('first\n');
    // (their link counts still include the upper layer's names until it is removed, after the result)
    expect(new Set(names.map((n) => statSync(n).ino)).size).toBe(3);
  });

  it("a command that is not there is the command's result (127, said plainly), not a sandbox that could not start", async () => {
    const r = await sandbox().run(req(s, ['aalis-no-such-command-here'], { policy: policy() }));
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toBe('aalis: aalis-no-such-command-here: command not found in the sandbox (or the interpreter its #! line names)\n');
  });

  it('a symlink the command makes pointing outside is committed as a symlink, never followed', async () => {
    const r = await sandbox().run(req(s, ['sh', '-c', `ln -s '${outside}' out && ln -s '${join(outside, 'keep.txt')}' outfile && mkdir sl && ln -s '${outside}' sl/x`], { policy: policy() }));
    expect(r.exitCode).toBe(0);
    expect(lstatSync(join(s.ws, 'out')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(s.ws, 'outfile'))).toBe(join(outside, 'keep.txt'));
    expect(readlinkSync(join(s.ws, 'sl/x'))).toBe(outside);
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('outside\n');
  });

  it('a host directory swapped for a symlink during the run: what the command wrote under it is not committed through the link', async () => {
    mkdirSync(join(s.ws, 'swap'));
    const sb = sandbox();
    // The swap comes after the write, while the command still runs: `sleep` with a token starts only once `echo` is done.
    const run = sb.run(req(s, ['sh', '-c', 'echo x > swap/planted.txt; sleep 1.0731'], { policy: policy() }));
    await untilProcess('1.0731');
    renameSync(join(s.ws, 'swap'), join(s.ws, 'swap-was'));
    symlinkSync(outside, join(s.ws, 'swap'));
    const r = await run;
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    // The host's `swap` is newer than the run: a conflict, so the host's link stays and nothing is written through it.
    if (MODEL === 'overlay') expect(r.conflicts?.map((c) => c.path)).toEqual([join(s.ws, 'swap')]);
    expect(lstatSync(join(s.ws, 'swap')).isSymbolicLink()).toBe(true);
  });

  it('names that are not UTF-8 and paths past PATH_MAX are committed, and a landing among them refused', async () => {
    const seg = 'd'.repeat(200);
    const code = [
      'import os',
      "os.makedirs(b'\\xff/in', exist_ok=True)",
      "open(b'\\xff/in/f.txt', 'w').write('raw')",
      "open(b'\\xff/.envrc', 'w').write('planted')",
      'os.mkdir("long"); os.chdir("long")',
      `for i in range(22):\n    os.mkdir('${seg}'); os.chdir('${seg}')`,
      "open('deep.txt', 'w').write('deep')",
      "open('.envrc', 'w').write('planted')",
    ].join('\n');
    const r = await sandbox().run(req(s, ['python3', '-c', code], { policy: policy() }));
    expect(r.exitCode).toBe(0);
    expect(r.stderr).not.toMatch(/could not|Traceback/);
    expect(readFileSync(bytes(s.ws, '/', FF, '/in/f.txt'), 'utf8')).toBe('raw');
    expect(existsSync(bytes(s.ws, '/', FF, '/.envrc'))).toBe(false);
    const check = `import os\nos.chdir('${join(s.ws, 'long')}')\nfor i in range(22): os.chdir('${seg}')\nprint(open('deep.txt').read(), os.path.exists('.envrc'))`;
    expect(execFileSync('python3', ['-c', check], { encoding: 'utf8' })).toBe('deep False\n');
    expect(r.writeDenied).toBe(true);
    expect(r.deniedWrites.some((p) => p.endsWith('/.envrc') && p.length > 4096)).toBe(true);
  });

  it('commits by copy when the upper layer is on another file system (tmpfs)', async () => {
    const tmpDir = '/dev/shm';
    if (statSync(tmpDir).dev === statSync(s.ws).dev) return;
    const r = await sandbox({ tmpDir }).run(req(s, ['sh', '-c', 'mkdir -p xdev/a && echo copied > xdev/a/f && ln -s a xdev/l && echo evil > xdev/.envrc'], { policy: policy() }));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'xdev/a/f'), 'utf8')).toBe('copied\n');
    expect(readlinkSync(join(s.ws, 'xdev/l'))).toBe('a');
    expect(existsSync(join(s.ws, 'xdev/.envrc'))).toBe(false);
    expect(readdirSync(join(s.ws, 'xdev')).filter((n) => n.startsWith('.aalis-commit-'))).toEqual([]);
  });

  it('probe() says which model runs use', async () => {
    const probe = await sandbox().probe();
    const check = probe.checks.find((c) => c.name === 'host-model');
    expect(check?.ok).toBe(true);
    expect(check?.detail).toMatch(MODEL === 'overlay' ? /^overlay: / : /look-based/);
  });
});

describe('hostModel: overlay fails closed where the overlay cannot be had', { timeout: 60_000 }, () => {
  it('a write root whose path the overlay options cannot carry: nothing runs', async () => {
    if (MODEL !== 'overlay') return;
    const odd = join(s.root, 'odd,root');
    mkdirSync(odd);
    const run = sandbox().run(req(s, ['sh', '-c', `echo ran > '${odd}/ran'`], { policy: policy({ write: [s.ws, odd, s.sessionTmp] }) }));
    await expect(run).rejects.toThrow(/overlay/);
    expect(existsSync(join(odd, 'ran'))).toBe(false);
    // auto falls back to the look and runs
    const r = await createLinuxSandbox({ hostModel: 'auto' }).run(req(s, ['sh', '-c', `echo ran > '${odd}/ran'`], { policy: policy({ write: [s.ws, odd, s.sessionTmp] }) }));
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(odd, 'ran'))).toBe(true);
  });
});

const pidsOf = (needle: string) =>
  readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() === needle;
      } catch {
        return false;
      }
    });


describe('where the overlay cannot be mounted (no unshare)', { timeout: 60_000 }, () => {
  it('hostModel overlay: probe() says the backend does not work and runs fail closed; auto runs on the look and says why', async () => {
    if (MODEL !== 'overlay') return;
    const required = sandbox({ unshare: '/nonexistent/unshare' });
    const probe = await required.probe();
    expect(probe.available).toBe(false);
    expect(probe.checks.find((c) => c.name === 'host-model')).toMatchObject({ ok: false, detail: expect.stringMatching(/^overlay required/), fix: expect.any(String) });
    await expect(required.run(req(s, ['sh', '-c', 'echo ran > no-overlay.txt'], { policy: policy() }))).rejects.toThrow(/overlay/);
    expect(existsSync(join(s.ws, 'no-overlay.txt'))).toBe(false);
    const auto = createLinuxSandbox({ hostModel: 'auto', unshare: '/nonexistent/unshare' });
    expect((await auto.probe()).checks.find((c) => c.name === 'host-model')?.detail).toMatch(/^look-based, because unshare/);
    const r = await auto.run(req(s, ['sh', '-c', 'echo ran > no-overlay.txt'], { policy: policy() }));
    expect(r.stderr).toMatch(/not captured in an overlay/);
    expect(readFileSync(join(s.ws, 'no-overlay.txt'), 'utf8')).toBe('ran\n');
  });
});

describe('a file system mounted under a writable root', { timeout: 60_000 }, () => {
  it('the overlay would hide it: hostModel overlay fails closed, auto falls back to the look and says why', async () => {
    if (MODEL !== 'overlay') return;
    const mnt = join(s.ws, 'mnt');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', mnt]);
    try {
      await expect(sandbox().run(req(s, ['sh', '-c', 'echo ran > mnt/ran'], { policy: policy() }))).rejects.toThrow(/mounted at .*mnt.*would hide it/);
      expect(existsSync(join(mnt, 'ran'))).toBe(false);
      const r = await createLinuxSandbox({ hostModel: 'auto' }).run(req(s, ['sh', '-c', 'echo ran > mnt/ran'], { policy: policy() }));
      expect(r.exitCode).toBe(0);
      expect(readFileSync(join(mnt, 'ran'), 'utf8')).toBe('ran\n');
      expect(r.stderr).toMatch(/not captured in an overlay .*because a file system is mounted at/);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});

describe('a daemon killed mid-run commits nothing', { timeout: 120_000 }, () => {
  it('its writes stay unjudged in its run folder, are never committed, and the next start sweeps them and says so', async () => {
    if (MODEL !== 'overlay') return;
    const tmpDir = join(s.root, 'daemon-tmp');
    mkdirSync(tmpDir);
    const token = `601.${process.pid}${Date.now() % 100_000}`; // this run's sleep, not another test's
    const child = execa(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'overlay.child.testing.ts'), 'kill', JSON.stringify(s), tmpDir, `--sleep=${token}`], { cwd: join(import.meta.dirname, '..'), reject: false });
    await untilProcess(token); // the writes were made before it
    child.kill('SIGKILL');
    await child;
    await until(() => pidsOf(`sleep ${token}`).length === 0, 'the sandbox died with the daemon');
    expect(existsSync(join(s.ws, 'unjudged.txt'))).toBe(false);
    expect(existsSync(join(s.ws, 'pkg/.github/workflows/ci.yml'))).toBe(false);
    const runs = readdirSync(tmpDir);
    expect(runs.length).toBe(1);
    const layers = join(tmpDir, runs[0]!, 'overlay');
    expect(readdirSync(layers).some((i) => existsSync(join(layers, i, 'upper/unjudged.txt')))).toBe(true); // the write was made, into the layer
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' }); // the next daemon start
    expect(readdirSync(tmpDir)).toEqual([]);
    expect(existsSync(join(s.ws, 'unjudged.txt'))).toBe(false);
    const r = await next.run(req(s, ['true'], { policy: policy() }));
    expect(r.stderr).toContain('left writes never judged; they were discarded, not committed');
  });
});

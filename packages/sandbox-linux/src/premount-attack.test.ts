import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountOperands } from './overlay-mount.js';
import { rootMapStep } from './root-map.js';
import { type OverlayScene, overlayScene, req, workspacePolicy } from './scene.testing.js';
import { findExecutable } from './tools.js';

/*
 * Attacks on, and breakages of, the hidden entries the root map's step mounts in bwrap's place
 * (premount.ts, root-map.helper.ts): real sandboxed runs as a root daemon, asserting what the
 * command meets and that runs which worked with bwrap's own hides still work.
 */

const isRoot = process.getuid?.() === 0;
const python = findExecutable('python3');
const bwrap = findExecutable('bwrap');
let s: OverlayScene;
beforeAll(async () => {
  if (isRoot) s = await overlayScene();
});
afterAll(() => s?.cleanup());

/** The step's hide operands in a plan's argv: `kind path` pairs. */
function stepHides(argv: readonly string[]): string[] {
  const at = argv.findIndex((a) => a.endsWith('/bwrap'));
  const step = argv.slice(0, at);
  const out: string[] = [];
  for (let i = 0; i + 2 < step.length; i++) if ((step[i] === 'f' || step[i] === 'd') && step[i + 2]!.startsWith('/')) out.push(`${step[i]} ${step[i + 2]}`);
  return out;
}

describe.skipIf(!isRoot || !python || !bwrap)('hidden entries mounted by the root map step, attacked', { timeout: 120_000 }, () => {
  it('a daemon temp on a noexec file system (a hardened /tmp): hidden files are still hidden and the run works (the bind of the empty file keeps the locked noexec)', async () => {
    const nx = join(s.root, 'noexec-tmp');
    mkdirSync(nx);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,nosuid,nodev,mode=0700', 'tmpfs', nx]);
    const sb = s.sandbox({ tmpDir: nx });
    try {
      const request = req(s, ['sh', '-c', 'printf "[%s]" "$(cat .env)"; (echo x > .env) 2>/dev/null || echo refused']);
      expect(stepHides((await sb.plan(request)).argv)).toContain(`f ${join(s.ws, '.env')}`);
      const r = await sb.run(request);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('[]refused\n');
    } finally {
      await sb.close();
      execFileSync('umount', ['-l', nx]);
    }
  });

  /** A workspace whose checked-in `.env` is a relative symlink to `target`: the step leaves its hide to bwrap, and the run works. */
  async function envLinkedTo(name: string, target: string): Promise<void> {
    const ws = join(s.root, name);
    mkdirSync(ws);
    symlinkSync(relative(ws, target), join(ws, '.env'));
    const sb = s.sandbox();
    try {
      const request = req(s, ['sh', '-c', 'printf "[%s]" "$(cat .env)"; echo ran'], { cwd: ws, policy: workspacePolicy(s, { write: [ws, s.sessionTmp] }) });
      const hides = stepHides((await sb.plan(request)).argv);
      expect(hides).not.toContain(`f ${join(ws, '.env')}`);
      expect(hides).not.toContain(`f ${target}`);
      const r = await sb.run(request);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('[]ran\n');
    } finally {
      await sb.close();
    }
  }

  it("a hidden .env that is a relative symlink to bwrap's binary: the step does not mount the empty file over bwrap (the run works, as with bwrap's own hide)", async () => {
    await envLinkedTo('ws-link', realpathSync(bwrap!));
  });

  it("a hidden .env that is a relative symlink to a library bwrap loads (libcap): the step does not hide the library before bwrap's exec (the run works, as with bwrap's own hide)", async () => {
    const lib = ['/usr/lib/x86_64-linux-gnu/libcap.so.2', '/usr/lib/aarch64-linux-gnu/libcap.so.2', '/usr/lib64/libcap.so.2']
      .map((p) => {
        try {
          return realpathSync(p);
        } catch {
          return undefined;
        }
      })
      .find((p) => p !== undefined);
    if (!lib) return;
    await envLinkedTo('ws-lib', lib);
  });

  it("a policy that hides bwrap's binary by its real path while the daemon names it by another (/bin/bwrap, /bin a symlink to usr/bin): bwrap still starts", async () => {
    const real = realpathSync(bwrap!);
    const other = join(s.root, 'bin-link');
    symlinkSync(join(real, '..'), other);
    const sb = s.sandbox({ bwrap: join(other, 'bwrap') });
    try {
      const policy = workspacePolicy(s);
      const request = req(s, ['sh', '-c', 'echo ran'], { policy: { ...policy, readDeny: [...policy.readDeny, { path: real }] } });
      const r = await sb.run(request);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('ran\n');
    } finally {
      await sb.close();
    }
  });

  it('a hidden entry swapped for a symlink after the scan: the step refuses it rather than mount the hide on the symlink\'s target', () => {
    const dir = mkdtempSync(join(s.root, 'swap-'));
    try {
      const empty = join(dir, 'empty');
      const target = join(dir, 'target');
      writeFileSync(empty, '');
      writeFileSync(target, 'NOT HIDDEN\n');
      symlinkSync(target, join(dir, 'entry'));
      const argv = [...rootMapStep(python!, { base: 0x70000000, count: 65536 }, [], mountOperands([]), ['f', empty, join(dir, 'entry')]), '/bin/sh', '-c', `cat ${target}; echo ran`];
      const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`aalis-rootmap: cannot hide the file ${join(dir, 'entry')}`);
      expect(r.status).toBe(125);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("one run's slow sync of its commit does not hold up another run's result (each run's sync is its own, not queued behind the others')", async () => {
    const slowRoot = join(s.root, 'ws-slow');
    const quickRoot = join(s.root, 'ws-quick');
    mkdirSync(slowRoot);
    mkdirSync(quickRoot);
    const started = join(s.root, 'slow-sync-started');
    const slowSync = join(s.root, 'sync-slow');
    // sleeps for the slow root only (a file system with much to write out), quick for any other
    writeFileSync(slowSync, `#!/bin/sh\nfor a in "$@"; do [ "$a" = '${slowRoot}' ] && { touch '${started}'; sleep 8; }; done\nexit 0\n`);
    chmodSync(slowSync, 0o755);
    const sb = s.sandbox({ sync: slowSync });
    const run = (ws: string) => sb.run(req(s, ['sh', '-c', 'echo x > f'], { cwd: ws, policy: workspacePolicy(s, { write: [ws, s.sessionTmp] }) }));
    try {
      const slow = run(slowRoot);
      while (!existsSync(started)) await new Promise((r) => setTimeout(r, 20));
      const t0 = Date.now();
      const quick = await run(quickRoot);
      const took = Date.now() - t0;
      expect(quick.exitCode).toBe(0);
      expect(took).toBeLessThan(5000);
      expect((await slow).exitCode).toBe(0);
    } finally {
      await sb.close();
    }
  });

  it('hidden names with a newline, a space, a non-UTF-8 byte, or that read like the step\'s separators: every one empty and read-only (the non-UTF-8 one puts all with bwrap, on fd 6)', async () => {
    const ws = join(s.root, 'ws-names');
    mkdirSync(join(ws, 'f'), { recursive: true });
    const odd = ['.env.a\nb', '.env. --', 'f/.env', '.env.-'];
    for (const n of odd) writeFileSync(join(ws, n), 'SECRET\n');
    const policy = workspacePolicy(s, { write: [ws, s.sessionTmp] });
    const script = 'for f in .env.* f/.env; do printf "[%s]" "$(cat "$f")"; (echo x > "$f") 2>/dev/null && echo "WROTE $f"; done; echo';
    const sb = s.sandbox();
    try {
      expect(stepHides((await sb.plan(req(s, ['true'], { cwd: ws, policy }))).argv).sort()).toEqual(odd.map((n) => `f ${join(ws, n)}`).concat(`d ${join(s.home, '.ssh')}`).sort());
      const plain = await sb.run(req(s, ['sh', '-c', script], { cwd: ws, policy }));
      expect(plain.stderr).toBe('');
      expect(plain.stdout).toBe('[][][][]\n');
      writeFileSync(Buffer.concat([Buffer.from(`${ws}/.env.`), Buffer.of(0xff)]), 'RAW SECRET\n');
      expect(stepHides((await sb.plan(req(s, ['true'], { cwd: ws, policy }))).argv)).toEqual([]);
      const raw = await sb.run(req(s, ['sh', '-c', script], { cwd: ws, policy }));
      expect(raw.stderr).toBe('');
      expect(raw.stdout).toBe('[][][][][]\n');
    } finally {
      await sb.close();
    }
  });

  it('a prepared sandbox (prepare on): the hides mounted at its preparation meet the command of the run that takes it', async () => {
    const sb = s.sandbox({ prepare: 'on' });
    try {
      const request = req(s, ['sh', '-c', 'printf "[%s]" "$(cat .env)"; ls -A "$0"; (echo x > .env) 2>/dev/null || echo refused', join(s.home, '.ssh')]);
      await sb.run({ ...request, argv: ['true'] });
      await sb.preparationsSettled();
      const before = sb.preparedCounts();
      const r = await sb.run(request);
      expect(sb.preparedCounts().used).toBe(before.used + 1);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('[]refused\n');
    } finally {
      await sb.close();
    }
  });
});

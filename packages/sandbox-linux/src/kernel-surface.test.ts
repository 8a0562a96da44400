import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KERNEL_SURFACE, kernelSurface, kernelSurfaceArgs } from './kernel-surface.js';
import { KERNEL_PROBE, kernelProbeHeld } from './kernel-surface.probe.testing.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';

const RATELIMIT = '/proc/sys/kernel/printk_ratelimit';
const child = join(import.meta.dirname, 'kernel-surface.child.testing.ts');
const isRoot = process.getuid?.() === 0;
const sb = createLinuxSandbox();
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s?.cleanup());

/** A value for printk_ratelimit that differs from the host's now. */
const otherValue = () => String(Number(readFileSync(RATELIMIT, 'utf8').trim()) + 1);

describe('kernel surface', { timeout: 60_000 }, () => {
  it('plans every knob read-only and every leaking file masked', () => {
    const plan = kernelSurfaceArgs(
      KERNEL_SURFACE.map((e) => ({ path: e.path, action: e.action, kind: e.path.endsWith('trigger') || e.path.startsWith('/proc/k') ? 'file' : 'dir' })),
      '/e',
      false,
    );
    expect(plan.args.join(' ')).toContain('--ro-bind /proc/sys /proc/sys');
    expect(plan.args.join(' ')).toContain('--ro-bind /proc/sysrq-trigger /proc/sysrq-trigger');
    expect(plan.args.join(' ')).toContain('--ro-bind /e /proc/kcore');
    expect(plan.remountRo).toContain('/sys/firmware');
    expect(kernelSurfaceArgs([], '/e', true).args).toEqual(['--ro-bind', '/sys', '/sys']);
  });

  it.skipIf(!isRoot)('as root: sysctls, sysrq-trigger and sysfs refuse writes, masked files read empty, the host keeps its value', async () => {
    const before = readFileSync(RATELIMIT, 'utf8');
    const r = await sb.run(req(s, ['python3', '-c', KERNEL_PROBE, otherValue()]));
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, string | number>;
    expect(kernelProbeHeld(out), `${r.stdout}${r.stderr}`).toEqual([]);
    expect(out[`w:${RATELIMIT}`]).toBe('EROFS');
    expect(out['w:/proc/sys/kernel/core_pattern']).toBe('EROFS');
    expect(out['w:/sys/kernel/mm/ksm/run']).toBe('EROFS');
    expect(readFileSync(RATELIMIT, 'utf8')).toBe(before);
  });

  it.skipIf(!isRoot)('a policy that makes part of /sys writable still gets it read-only', async () => {
    const before = readFileSync(RATELIMIT, 'utf8');
    const base = req(s, ['true']).policy;
    const r = await sb.run(req(s, ['python3', '-c', KERNEL_PROBE, otherValue()], { policy: { ...base, write: [...base.write, '/sys/kernel/mm'] } }));
    const out = JSON.parse(r.stdout) as Record<string, string | number>;
    expect(kernelProbeHeld(out)).toEqual([]);
    expect(out['w:/sys/kernel/mm/ksm/run']).toBe('EROFS');
    expect(readFileSync(RATELIMIT, 'utf8')).toBe(before);
  });

  it('mounts /sys and every submount of it read-only, and /proc/sys too', async () => {
    const r = await sb.run(req(s, ['cat', '/proc/self/mountinfo']));
    const mounts = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map((f) => ({ at: f[4]!, opts: f[5]!.split(',') }));
    const sys = mounts.filter((m) => m.at === '/sys' || m.at.startsWith('/sys/') || m.at === '/proc/sys');
    expect(sys.map((m) => m.at)).toContain('/sys');
    expect(sys.map((m) => m.at)).toContain('/proc/sys');
    expect(sys.filter((m) => !m.opts.includes('ro'))).toEqual([]);
  });

  it.skipIf(!isRoot)('as root with rootUidMap off: doctor says plainly that commands run as the host uid 0, as they do', async () => {
    const off = createLinuxSandbox({ rootUidMap: 'off' });
    const check = (await off.probe()).checks.find((c) => c.name === 'host-uid');
    expect(check).toMatchObject({ ok: false, fix: expect.stringMatching(/ordinary user/) });
    expect(check?.detail).toMatch(/run as the host's uid 0/);
    await off.run(req(s, ['sh', '-c', 'echo x > made-by-root']));
    expect(statSync(join(s.ws, 'made-by-root')).uid).toBe(0);
  });

  it('finds the entries this kernel has', () => {
    for (const p of kernelSurface()) expect(existsSync(p.path)).toBe(true);
    expect(kernelSurface().map((p) => p.path)).toContain('/proc/sys');
  });

  const canSwitch = canRunAsNobody(child);
  it.skipIf(!canSwitch)('as nobody: the same writes are refused and the host keeps its value', async () => {
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
    const before = readFileSync(RATELIMIT, 'utf8');
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s), otherValue());
    const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 50_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as Record<string, string | number>;
    expect(kernelProbeHeld(out)).toEqual([]);
    expect(readFileSync(RATELIMIT, 'utf8')).toBe(before);
  });
});

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { afterEach, describe, expect, it } from 'vitest';
import { readonlyPolicy } from '../test/policies.js';
import { createDarwinSandbox } from './darwin-sandbox.js';

// These run for real on this Linux machine: the provider must refuse, and refusing must mean
// that nothing ran. Only the "macOS without sandbox-exec" case names a platform it is not on.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aalis-darwin-test-'));
  dirs.push(dir);
  return dir;
}

describe.runIf(process.platform !== 'darwin')('the darwin sandbox off macOS', () => {
  it('probes unavailable and says why', async () => {
    const probe = await createDarwinSandbox().probe();
    expect(probe.backend).toBe('darwin');
    expect(probe.available).toBe(false);
    expect(probe.checks[0]).toMatchObject({ name: 'macOS', ok: false, detail: `running on ${process.platform}; Seatbelt exists only on macOS` });
    expect(probe.checks[0]?.fix).toMatch(/linux sandbox|docker/);
    expect(probe.checks.find((check) => check.name === 'sandbox-exec')).toMatchObject({ ok: false });
  });

  it('refuses to run and runs nothing', async () => {
    const dir = scratch();
    const marker = join(dir, 'ran');
    const attempt = createDarwinSandbox().run({
      argv: ['/bin/sh', '-c', `touch '${marker}'`],
      cwd: dir,
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 5_000,
      policy: { ...readonlyPolicy, write: [dir] },
    });
    await expect(attempt).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(attempt).rejects.toThrow(/the darwin sandbox cannot run this command: running on linux.*Fix: /);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses before looking at the request, even a broken one', async () => {
    const attempt = createDarwinSandbox().run({ argv: [''], cwd: 'relative', env: {}, timeoutMs: -1, policy: readonlyPolicy });
    await expect(attempt).rejects.toBeInstanceOf(SandboxUnavailableError);
  });

  it('on a macOS without sandbox-exec (platform named, binary really absent) it is unavailable too', async () => {
    const dir = scratch();
    const service = createDarwinSandbox({ platform: 'darwin', sandboxExec: join(dir, 'no-sandbox-exec') });
    const probe = await service.probe();
    expect(probe.available).toBe(false);
    expect(probe.checks).toEqual([
      expect.objectContaining({ name: 'macOS', ok: true }),
      expect.objectContaining({ name: 'sandbox-exec', ok: false, detail: `${join(dir, 'no-sandbox-exec')} is missing or not executable` }),
    ]);
    const marker = join(dir, 'ran');
    const attempt = service.run({ argv: ['/bin/sh', '-c', `touch '${marker}'`], cwd: dir, env: {}, timeoutMs: 5_000, policy: readonlyPolicy });
    await expect(attempt).rejects.toThrow(/missing or not executable.*Fix: restore/);
    expect(existsSync(marker)).toBe(false);
  });

  it('a stand-in that does not enforce is caught by the probe and never used', async () => {
    // The stand-in runs commands unsandboxed; the probe's real refusal check must notice.
    const standIn = new URL('../test/fixtures/stand-in-sandbox-exec.pl', import.meta.url).pathname;
    const dir = scratch();
    const service = createDarwinSandbox({ platform: 'darwin', sandboxExec: standIn });
    const probe = await service.probe();
    expect(probe.available).toBe(false);
    expect(probe.checks.at(-1)).toMatchObject({ name: 'sandbox-exec enforces a profile', ok: false });
    const marker = join(dir, 'ran');
    await expect(service.run({ argv: ['/bin/sh', '-c', `touch '${marker}'`], cwd: dir, env: {}, timeoutMs: 5_000, policy: readonlyPolicy })).rejects.toThrow(
      /denied write was not refused/,
    );
    expect(existsSync(marker)).toBe(false);
  });
});

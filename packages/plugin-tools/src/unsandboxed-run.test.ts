import { describe, expect, it } from 'vitest';
import { runUnsandboxed } from './unsandboxed-run.js';

const env = { PATH: '/usr/bin:/bin' };

describe('runUnsandboxed', () => {
  it('gives the command exactly the environment it is handed', async () => {
    const result = await runUnsandboxed({ argv: ['/bin/sh', '-c', 'env'], cwd: '/', env: { ...env, ONLY: 'this' }, timeoutMs: 10_000, maxOutputBytes: 1 << 20 });
    expect(result.stdout.trim().split('\n').sort()).toEqual(['ONLY=this', 'PATH=/usr/bin:/bin', 'PWD=/'].sort());
  });

  it('kills the whole tree on timeout and on abort, grandchildren included', async () => {
    const timedOut = await runUnsandboxed({ argv: ['/bin/sh', '-c', 'sleep 30 & sleep 30; echo never'], cwd: '/', env, timeoutMs: 300, maxOutputBytes: 1 << 20 });
    expect(timedOut.timedOut).toBe(true);
    expect(timedOut.stdout).toBe('');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const aborted = await runUnsandboxed({ argv: ['/bin/sh', '-c', 'sleep 30 & sleep 30'], cwd: '/', env, timeoutMs: 60_000, maxOutputBytes: 1 << 20, signal: controller.signal });
    expect(aborted.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('cuts output at the limit and says so', async () => {
    const result = await runUnsandboxed({ argv: ['/bin/sh', '-c', 'yes | head -c 100000'], cwd: '/', env, timeoutMs: 10_000, maxOutputBytes: 1000 });
    expect(result.stdout.length).toBe(1000);
    expect(result.truncated).toBe(true);
  });

  it('a program that cannot be started is a clear failure that says it did not run', async () => {
    const missing = runUnsandboxed({ argv: ['aalis-no-such-program'], cwd: '/', env, timeoutMs: 10_000, maxOutputBytes: 1000 });
    await expect(missing).rejects.toMatchObject({ kind: 'failed', message: expect.stringMatching(/'aalis-no-such-program' was not found.*It did not run/) });
    const gone = runUnsandboxed({ argv: ['/bin/true'], cwd: '/var/tmp/aalis-no-such-dir', env, timeoutMs: 10_000, maxOutputBytes: 1000 });
    await expect(gone).rejects.toMatchObject({ kind: 'failed', message: expect.stringContaining('/var/tmp/aalis-no-such-dir does not exist') });
  });
});

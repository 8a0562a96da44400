import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureLoginEnv } from './login-env.js';

// Real shells: the capture runs `<shell> -l -c 'env -0'` on this machine.
describe('captureLoginEnv', () => {
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', AALIS_PROBE: 'kept' };

  it('asks the shell SHELL names and returns what it printed', async () => {
    const got = await captureLoginEnv({ timeoutMs: 10_000, base: { ...base, SHELL: '/bin/sh' } });
    expect(got.source).toBe('login-shell');
    if (got.source === 'login-shell') expect(got.shell).toBe('/bin/sh');
    expect(got.env.AALIS_PROBE).toBe('kept');
  });

  it("without SHELL (a service manager, CI) asks the account's login shell, not the daemon's environment", async () => {
    const got = await captureLoginEnv({ timeoutMs: 10_000, base });
    const account = userInfo().shell;
    if (account && !/(nologin|false)$/.test(account)) {
      expect(got).toMatchObject({ source: 'login-shell', shell: account });
    } else {
      expect(got).toMatchObject({ source: 'fallback', reason: 'SHELL is not set and the account has no login shell' });
    }
  });

  it('falls back to the daemon environment and says why when the shell fails or hangs', async () => {
    const failed = await captureLoginEnv({ shell: '/bin/false', timeoutMs: 10_000, base });
    expect(failed.source).toBe('fallback');
    if (failed.source === 'fallback') expect(failed.reason).toMatch(/login shell \/bin\/false failed/);
    expect(failed.env).toEqual(base);
    const slow = join(mkdtempSync(join(tmpdir(), 'aalis-login-')), 'slow-shell');
    writeFileSync(slow, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(slow, 0o755);
    const hung = await captureLoginEnv({ shell: slow, timeoutMs: 300, base });
    expect(hung).toMatchObject({ source: 'fallback', reason: `the login shell ${slow} did not answer within 300 ms` });
  });
});

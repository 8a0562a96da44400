import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineSkip, TEST_IMAGE } from '../test/engine.js';

const NOBODY = 65534;
const CHILD = join(import.meta.dirname, '..', 'test', 'denied.ts');

/** Root with setpriv, a checkout `nobody` can read, and an engine socket it may not use (not world-writable). */
function canRun(): boolean {
  if (engineSkip || process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv') || !existsSync('/var/run/docker.sock')) return false;
  if ((statSync('/var/run/docker.sock').mode & 0o002) !== 0) return false;
  try {
    execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', 'test', '-r', CHILD]);
    return true;
  } catch {
    return false;
  }
}

// A user the engine's socket refuses was told "no Docker Engine answers" and to start one, while
// the engine ran: the refusal is said as what it is, with what gives the user access.
describe.runIf(canRun())('a user the engine socket refuses', () => {
  it('is told so by a run, a section and the probe, not that no engine answers', { timeout: 60_000 }, () => {
    const out = execFileSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, '--conditions=aalis-source', '--import', 'tsx', CHILD, TEST_IMAGE], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp' },
      cwd: join(import.meta.dirname, '..'),
    });
    const said = out.trim().split('\n').map((line) => JSON.parse(line) as { code?: string; message: string; fix?: string });
    expect(said).toHaveLength(3);
    // what `aalis doctor` shows for the engine
    const probe = said.pop()!;
    expect(probe.code).toBe('probe');
    expect(probe.message).toMatch(/^the engine at .* refuses this user: permission denied/);
    expect(probe.fix).toMatch(/docker group/);
    for (const refusal of said) {
      expect(refusal.code).toBe('sandbox-unavailable');
      expect(refusal.message).toMatch(/the Docker Engine at .* refuses this user \(permission denied on its socket\)/);
      expect(refusal.message).not.toMatch(/no Docker Engine answers/);
      expect(refusal.fix).toMatch(/docker group/);
    }
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, type Scene } from './scene.testing.js';

const NOBODY = 65534;
const child = join(import.meta.dirname, 'unprivileged.child.testing.ts');
const asNobody = (...argv: string[]) => ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...argv];

/** Root with setpriv, and a checkout that `nobody` can read (a clone under a private home cannot be). */
function canSwitch(): boolean {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) return false;
  try {
    const [cmd, ...args] = asNobody('test', '-r', child);
    execFileSync(cmd!, args);
    return true;
  } catch {
    return false;
  }
}
let s: Scene;
const able = canSwitch();
beforeAll(() => {
  if (!able) return;
  s = makeScene();
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
});
afterAll(() => s?.cleanup());

// CI runs as root; the daemon usually does not. The same checks as another user, switched with
// setpriv; skipped (and so reported) where that user cannot read this checkout.
describe.skipIf(!able)('as an unprivileged user (nobody)', { timeout: 120_000 }, () => {
  it('runs, writes where allowed, and refuses the landings and the deny-read list', async () => {
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s));
    const r = await execa(cmd!, args, {
      cwd: join(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
      extendEnv: false,
      reject: false,
      timeout: 100_000, // under the test's own timeout, so a hang shows its stderr
    });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.available).toBe(true);
    expect(out.id.out).toBe(String(NOBODY));
    expect(out.write).toMatchObject({ out: 'ok', exit: 0 });
    expect(out.hook).toMatchObject({ denied: true });
    expect(out.env.out).toBe('');
    expect(out.key.out).toBe('');
    expect(out.envrc).toMatchObject({ denied: true });
    expect(existsSync(join(s.ws, '.envrc'))).toBe(false);
    expect(out.network).toMatchObject({ out: '1', exit: 0 }); // slirp4netns entered the sandbox's namespaces as nobody
  });
});

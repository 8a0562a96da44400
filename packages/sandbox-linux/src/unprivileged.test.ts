import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, type Scene } from './scene.testing.js';

const NOBODY = 65534;
const canSwitch = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
let s: Scene;
beforeAll(() => {
  s = makeScene();
  if (canSwitch) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
});
afterAll(() => s.cleanup());

// CI runs as root; the daemon usually does not. The same checks as another user, switched with setpriv.
describe.skipIf(!canSwitch)('as an unprivileged user (nobody)', { timeout: 60_000 }, () => {
  it('runs, writes where allowed, and refuses the landings and the deny-read list', async () => {
    const child = join(import.meta.dirname, 'unprivileged.child.testing.ts');
    const r = await execa('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, '--import', 'tsx', child, JSON.stringify(s)], {
      cwd: join(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
      extendEnv: false,
      reject: false,
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

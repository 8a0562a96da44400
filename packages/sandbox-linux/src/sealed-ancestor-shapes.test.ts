import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_FILES, type SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * More shapes of the .env symlink in a sealed ancestor (sealed-ancestor-symlinks.test.ts):
 * 1. the daemon's own shape (protected-lists.ts denyRead): the whole data directory hidden by a
 *    { path } rule whose exceptions are paths; the link is data/.env (data is an ancestor of the
 *    session temp, inside the rule's directory, hidden);
 * 2. the sealed directory under the host's /tmp (private in the sandbox), the roots under it.
 */
let s: Scene;
let outside: string;
let outside2: string;
let t: string;
beforeAll(() => {
  s = makeScene();
  mkdirSync(join(s.root, 'elsewhere'));
  outside = join(s.root, 'elsewhere', 'creds.txt');
  writeFileSync(outside, 'OUTSIDE-SECRET\n');
  outside2 = join(s.root, 'elsewhere', 'creds2.txt');
  writeFileSync(outside2, 'OUTSIDE-SECRET-2\n');
  mkdirSync(join(s.data, 'logs'));
  symlinkSync(outside, join(s.data, '.env'));
  t = realpathSync(mkdtempSync('/tmp/aalis-sealed-'));
  mkdirSync(join(t, 'p', 'a', 'r'), { recursive: true });
  symlinkSync(outside2, join(t, 'p', 'a', '.env'));
});
afterAll(() => {
  s.cleanup();
  rmSync(t, { recursive: true, force: true });
});

async function cat(policy: SandboxPolicy, file = outside): Promise<string> {
  const sb = createLinuxSandbox({ hostModel: 'overlay' });
  try {
    const r = await sb.run(req(s, ['sh', '-c', `cat ${file}; echo done`], { policy }));
    return r.stdout;
  } finally {
    await sb.close();
  }
}

describe('a .env symlink in a sealed ancestor, other shapes', () => {
  it('the data directory hidden whole but for paths: its target stays hidden', async () => {
    const base = workspacePolicy(s);
    const policy = { ...base, readDeny: [ENV_FILES, { path: join(s.home, '.ssh') }, { path: s.data, except: [{ path: join(s.data, 'logs') }] }] };
    expect(await cat(policy)).toBe('done\n');
  });

  it('a sealed directory under the host /tmp: its target stays hidden', async () => {
    const base = workspacePolicy(s);
    const r = join(t, 'p', 'a', 'r');
    const policy = { ...base, readDeny: [...base.readDeny, { path: join(t, 'p') }], readAllowWithin: [s.sessionTmp, r] };
    expect(await cat(policy, outside2)).toBe('done\n');
  });
});

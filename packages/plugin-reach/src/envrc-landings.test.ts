import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { reach } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type OriginTurn, sessionsPlugin } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { reachBindings } from './bindings.js';
import { reachPlugin } from './plugin.js';

// What the .envrc at (or above) the main directory loads is a landing of the policy itself, read
// for every call: so the tool boundary asks for it, and every backend (Docker, Seatbelt) refuses
// it, not only the Linux sandbox's commit. A real kernel; each was an ordinary write before.
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-envrc-reach-')));
const home = join(root, 'home');
const ws = join(home, 'proj');
const turn: OriginTurn = { session: { id: 's1' }, platform: 'cli', speaker: { platform: 'cli', userId: 'owner' }, authorised: { platform: 'cli', userId: 'owner' }, inbound: { id: 'm' }, category: 'own' };
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the .envrc of the main directory names landings', { timeout: 60_000 }, () => {
  it('PATH_add, source_env and a flake (and one above, in the home) are asked for; the rest is not; an .envrc added later counts at the next call', async () => {
    mkdirSync(ws, { recursive: true });
    mkdirSync(join(root, 'install'));
    writeFileSync(join(home, '.envrc'), 'PATH_add proj/tools\n');
    const kernel = createKernel({ dataDir: join(root, 'data') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: home, loginShell: '/bin/sh' });
    await kernel.start();
    try {
      kernel.get(reachBindings).bind('s1', { home: ws });
      const before = await kernel.get(reach).forCall(turn);
      expect(before.allows('write', join(ws, 'bin', 'git'))).toBe(true);
      expect(before.allows('write', join(ws, 'tools', 'ls'))).toBe(false); // the home's .envrc
      writeFileSync(join(ws, '.envrc'), 'PATH_add bin\nsource_env_if_exists .envrc.local\nuse flake\n');
      const credential = await kernel.get(reach).forCall(turn);
      for (const p of ['bin/git', '.envrc.local', 'flake.nix', 'nix/shell.nix', 'flake.lock', '.direnv/flake-profile-x.rc', 'tools/ls']) {
        expect(credential.allows('write', join(ws, p)), p).toBe(false);
        expect(credential.sandboxPolicy().writeDeny.some((r) => ('path' in r ? join(ws, p).startsWith(r.path) : new RegExp(r.pattern, 'su').test(join(ws, p)))), p).toBe(true);
      }
      expect(await credential.require({ effect: 'write', path: join(ws, 'bin', 'git') })).toMatchObject({ allowed: false });
      expect(credential.allows('write', join(ws, 'src', 'main.ts'))).toBe(true);
    } finally {
      await kernel.stop();
    }
  });
});

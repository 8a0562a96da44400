import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reach } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type Identity, type OriginTurn, sessionsPlugin } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { reachBindings } from './bindings.js';
import { reachPlugin } from './plugin.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-reach-person-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ownerHome = join(root, 'owner-home');
mkdirSync(join(ownerHome, '.cache'), { recursive: true });
const spaceOf = (name: string) => {
  const dir = join(root, 'users', name);
  for (const sub of ['workspace', 'tmp', 'home/.cache']) mkdirSync(join(dir, sub), { recursive: true });
  return { workspace: join(dir, 'workspace'), tmp: join(dir, 'tmp'), caches: [join(dir, 'home', '.cache')] };
};

const alice = { platform: 'chat', userId: 'alice' };
const bob = { platform: 'chat', userId: 'bob' };
const turnOf = (who: Identity): OriginTurn => ({ session: { id: 'shared' }, platform: 'chat', speaker: who, authorised: who, inbound: { id: 'm' }, category: 'own' });

describe('bindings per person in one conversation (the docker deployment)', () => {
  it("gives each person's calls their own home, temp and caches, never the other's nor the owner's caches", async () => {
    const kernel = createKernel({ dataDir: join(root, 'data') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { chat: ['alice', 'bob'] } })
      .use(reachPlugin, { install: root, form: 'source', userHome: ownerHome, loginShell: '/bin/sh' });
    await kernel.start();
    const a = spaceOf('alice');
    const b = spaceOf('bob');
    kernel.get(reachBindings).bind('shared', { ...a, home: a.workspace, person: 'chat:alice' });
    kernel.get(reachBindings).bind('shared', { ...b, home: b.workspace, person: 'chat:bob' });

    const forAlice = await kernel.get(reach).forCall(turnOf(alice));
    const forBob = await kernel.get(reach).forCall(turnOf(bob));
    expect(forAlice.home).toBe(a.workspace);
    expect(forBob.home).toBe(b.workspace);
    const aliceWrites = forAlice.sandboxPolicy().write;
    const bobWrites = forBob.sandboxPolicy().write;
    expect(aliceWrites).toEqual(expect.arrayContaining([a.workspace, a.caches[0]]));
    expect(aliceWrites.some((p) => p.startsWith(`${a.tmp}/`) && /\/[0-9a-f]{2}\/session-[0-9a-f]{24}$/.test(p))).toBe(true);
    for (const path of [b.workspace, b.tmp, b.caches[0], join(ownerHome, '.cache'), join(root, 'data', 'tmp')]) {
      expect(aliceWrites.some((p) => p === path || p.startsWith(`${path}/`))).toBe(false);
    }
    expect(bobWrites).toEqual(expect.arrayContaining([b.workspace, b.caches[0]]));
    expect(bobWrites.some((p) => p.startsWith(`${a.workspace}`) || p.startsWith(a.tmp))).toBe(false);
    const bobTmp = (await forBob.processEnv('sandbox')).TMPDIR ?? '';
    expect(bobTmp.startsWith(`${b.tmp}/`) && /\/[0-9a-f]{2}\/session-[0-9a-f]{24}$/.test(bobTmp)).toBe(true);
    await kernel.stop();
  });
});

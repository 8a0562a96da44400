import { join } from 'node:path';
import { reach, type SandboxPolicy } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type OriginTurn, sessionsPlugin } from '@aalis/core';
import { reachBindings } from './bindings.js';
import { reachPlugin } from './plugin.js';

/** The owner's turn in session `s1` on the cli platform. */
export const OWNER_TURN: OriginTurn = { session: { id: 's1' }, platform: 'cli', speaker: { platform: 'cli', userId: 'owner' }, authorised: { platform: 'cli', userId: 'owner' }, inbound: { id: 'm' }, category: 'own' };

/**
 * The sandbox policy a daemon's reach gives the owner's call with its main directory at `ws`: a
 * real kernel (sessions, authority, the reach plugin with `root/install` and `root/data`), with
 * `env` set in this process's environment while the reach activates (it reads the XDG variables
 * then) and put back after.
 */
export async function reachPolicyWith(o: { root: string; home: string; ws: string; env?: Readonly<Record<string, string>> }): Promise<SandboxPolicy> {
  const env = o.env ?? {};
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const kernel = createKernel({ dataDir: join(o.root, 'data') })
    .use(sessionsPlugin, { persist: false })
    .use(authorityPlugin, { owners: { cli: ['owner'] } })
    .use(reachPlugin, { install: join(o.root, 'install'), form: 'source', userHome: o.home, loginShell: '/bin/sh' });
  try {
    await kernel.start();
    kernel.get(reachBindings).bind('s1', { home: o.ws });
    return (await kernel.get(reach).forCall(OWNER_TURN)).sandboxPolicy();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await kernel.stop();
  }
}

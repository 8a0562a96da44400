import { type Identity, type OriginTurn, originatingTurn, settingsScopeOf } from '@aalis/core';
import type { ReachBindings } from '@aalis/plugin-reach';
import type { DockerDeployment } from '@aalis/sandbox-docker';
import { ApiError } from './http.js';

/** A name the docker deployment accepts for a person: `<platform>-<user id>`, made safe. */
export function userIdOf(identity: Identity): string {
  const raw = `${identity.platform}-${identity.userId}`;
  const safe = raw.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[^A-Za-z0-9]/, 'u');
  return safe.slice(0, 64);
}

/** The space of turns nobody authenticated (they have no local effect; the space only keeps them apart). */
const NOBODY = 'anonymous';

/**
 * Binds each person of a conversation to their own space of the docker deployment before their
 * first call in it: the person is the authenticated speaker of the turn that started the call
 * (the same person whose settings the conversation keeps), never a display name. A shared
 * conversation's commands and file tools run in the space of whoever's turn it is, with that
 * person's workspace, temp and caches; nobody's turn ever runs in the first speaker's space.
 */
export function dockerPlacer(docker: DockerDeployment, bindings: () => ReachBindings): (turn: OriginTurn) => Promise<void> {
  const placed = new Set<string>();
  return async (turn) => {
    const root = turn.session.rootId ?? turn.session.id;
    const person = settingsScopeOf(turn);
    const key = `${root}\u0000${person}`;
    if (placed.has(key)) return;
    const who = originatingTurn(turn).authorised;
    const userId = who === null ? NOBODY : userIdOf(who);
    const space = await docker.user(userId).catch((error: unknown) => {
      throw new ApiError('bad-request', `the docker deployment has no space for ${person}: ${(error as Error).message}`);
    });
    // `space`: reach refuses every other person's space (and session temps) to this person's calls.
    bindings().bind(root, { home: space.workspace, tmp: space.tmp, caches: space.caches, person, space: space.dataDir });
    placed.add(key);
  };
}

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Identity, type OriginTurn, originatingTurn, settingsScopeOf } from '@aalis/core';
import type { ReachBindings } from '@aalis/plugin-reach';
import type { DockerDeployment } from '@aalis/sandbox-docker';
import { ApiError } from './http.js';

/**
 * The name of a person's space (and the label of their containers) in the docker deployment:
 * `<platform>-<user id>` made safe and cut to 31 characters, for people to read, then `-` and
 * 32 hex digits of the SHA-256 of `platform\0userId`, which tells identities apart. The readable
 * part alone was lossy (`chat:alice@corp` and `chat:alice_corp`, `qq:a-b` and `qq-a:b` shared one
 * space and one container); the digest is over both fields with a separator neither can hold.
 */
export function userIdOf(identity: Identity): string {
  const digest = createHash('sha256').update(`${identity.platform}\u0000${identity.userId}`).digest('hex').slice(0, 32);
  return `${legacyUserIdOf(identity).slice(0, 31)}-${digest}`;
}

/** The name spaces had before the digest (`<platform>-<user id>` made safe, at most 64): only to find them. */
export function legacyUserIdOf(identity: Identity): string {
  const raw = `${identity.platform}-${identity.userId}`;
  const safe = raw.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^[^A-Za-z0-9]/, 'u');
  return safe.slice(0, 64);
}

/** The file in a space's data directory (never mounted into a container) that names whose space it is. */
export const SPACE_IDENTITY_FILE = 'identity.json';

/** Whose a space is, as {@link SPACE_IDENTITY_FILE} records it: an identity, or nobody (unauthenticated turns). */
type SpaceOwner = { readonly platform: string; readonly userId: string } | { readonly nobody: true };

/**
 * Makes sure the space in `dataDir` is `who`'s (null: the space of unauthenticated turns): records
 * it on first use and refuses a space that records anyone else, so a name that ever came to be
 * shared still never opens one person's files to another. Throws {@link ApiError} `conflict`.
 */
export async function claimSpace(dataDir: string, who: Identity | null): Promise<void> {
  const owner: SpaceOwner = who === null ? { nobody: true } : { platform: who.platform, userId: who.userId };
  const file = join(dataDir, SPACE_IDENTITY_FILE);
  const wanted = JSON.stringify(owner);
  try {
    await writeFile(file, `${wanted}\n`, { flag: 'wx', mode: 0o600 });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ApiError('conflict', `the docker deployment cannot record whose space ${dataDir} is: ${(error as Error).message}`, { fix: 'check that the daemon can write the data directory' });
    }
  }
  let recorded: string;
  try {
    recorded = JSON.stringify(JSON.parse(await readFile(file, 'utf8')) as SpaceOwner);
  } catch (error) {
    throw new ApiError('conflict', `the docker deployment cannot tell whose space ${dataDir} is: ${file} is unreadable (${(error as Error).message})`, {
      fix: `check whose files ${dataDir} holds, then remove ${file} (the next call records its person) or the whole space`,
    });
  }
  if (recorded !== wanted) {
    throw new ApiError('conflict', `the docker deployment space ${dataDir} belongs to ${recorded}, not ${wanted}; refusing to open it`, {
      fix: `move the space aside (its files are the other person's) and retry; the daemon makes a new one`,
    });
  }
}

/**
 * Refuses a person whose space has not been made under its digest name while a space under the
 * name it had before exists: that space may be theirs, or another identity's that had the same
 * name, which only the operator can tell.
 */
function refuseLegacySpace(dataDir: string, who: Identity): void {
  const legacy = join(dirname(dataDir), legacyUserIdOf(who));
  if (existsSync(dataDir) || !existsSync(legacy)) return;
  throw new ApiError('conflict', `${who.platform}:${who.userId} has a space from before spaces were named with a digest (${legacy}); it is not opened, since two identities could have shared that name`, {
    fix: `if its files are this person's alone, move it to ${dataDir}; otherwise move it aside; then retry`,
  });
}

/** The space of turns nobody authenticated (they have no local effect; the space only keeps them apart). */
const NOBODY = 'anonymous';

/**
 * Binds each person of a conversation to their own space of the docker deployment before their
 * first call in it (`turn` as the API opened it, its root the kernel's: api.ts `openedTurn`): the person is the authenticated speaker of the turn that started the call
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
    if (who !== null) refuseLegacySpace(join(docker.dataRoot, 'users', userId), who);
    const space = await docker.user(userId).catch((error: unknown) => {
      throw new ApiError('bad-request', `the docker deployment has no space for ${person}: ${(error as Error).message}`);
    });
    await claimSpace(space.dataDir, who);
    // `space`: reach refuses every other person's space (and session temps) to this person's calls.
    bindings().bind(root, { home: space.workspace, tmp: space.tmp, caches: space.caches, person, space: space.dataDir });
    placed.add(key);
  };
}

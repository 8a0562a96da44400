import type { Identity, OriginTurn } from '@aalis/core';
import type { AdapterClient } from './adapter-tokens.js';
import { ApiError } from './http.js';

/**
 * Who sent a request to the daemon's API: the owner (the daemon's token: the CLI, the console) or
 * an adapter (its own token, adapter-tokens.ts), which acts only within its platform.
 */
export type ApiClient = { readonly kind: 'owner' } | AdapterClient;

/** The owner's client: every route, every conversation. */
export const OWNER_CLIENT: ApiClient = Object.freeze({ kind: 'owner' });

/** Where the daemon noted a conversation's platform (session-index.ts): the platform of its first turn. */
export interface PlatformIndex {
  platformOf(id: string): string | undefined;
}

function outside(client: AdapterClient, what: string): ApiError {
  return new ApiError('not-its-platform', `adapter '${client.name}' speaks for platform '${client.platform}' only, and ${what}; nothing was done.`, {
    fix: "an adapter vouches only for its own platform's people and conversations; use that platform's adapter, or the owner's token (the console, 'aalis chat')",
  });
}

/** Every identity a turn names, its starters' included. */
function identitiesOf(turn: OriginTurn): { role: string; who: Identity }[] {
  const all: { role: string; who: Identity }[] = [];
  for (let t: OriginTurn | undefined = turn, depth = 0; t !== undefined; t = t.startedBy, depth++) {
    const at = depth === 0 ? '' : ' of the turn that started it';
    all.push({ role: `the speaker${at}`, who: t.speaker });
    if (t.authorised) all.push({ role: `the authorised identity${at}`, who: t.authorised });
    for (const p of t.participants ?? []) all.push({ role: `a participant${at}`, who: p });
    if (t.approvedBy) all.push({ role: `the approver${at}`, who: t.approvedBy });
  }
  return all;
}

/**
 * Refuses a turn an adapter may not send: one of another platform, naming anyone of another
 * platform, or in (or started from) a conversation that began on another platform. The owner's
 * client may send any turn. (`approvedBy` is never in a body: payloads.ts `DAEMON_ONLY_TURN_FIELDS`.)
 */
export function checkTurnOf(client: ApiClient, turn: OriginTurn, index: PlatformIndex): void {
  if (client.kind === 'owner') return;
  const prefix = conversationPrefixOf(client);
  for (let t: OriginTurn | undefined = turn; t !== undefined; t = t.startedBy) {
    if (t.platform !== client.platform) throw outside(client, `the turn says it came from platform '${t.platform}'`);
    for (const id of [t.session.id, t.session.rootId]) {
      if (id === undefined) continue;
      if (!id.startsWith(prefix)) {
        throw new ApiError('not-its-platform', `adapter '${client.name}' names its conversations '${prefix}<id>', and '${id}' is not one; nothing was done.`, {
          fix: `name the conversation '${prefix}${id}' (an adapter's conversations are its platform's, apart from the owner's 'cli' and 'console' and every other platform's)`,
        });
      }
      checkConversationOf(client, id, index);
    }
  }
  for (const { role, who } of identitiesOf(turn)) {
    if (who.platform !== client.platform) throw outside(client, `${role} is of platform '${who.platform}'`);
  }
}

/**
 * The prefix of an adapter's conversation ids, `<platform>:`: a conversation the owner's clients
 * name by default (`cli`, `console`) or any other platform's is never one an adapter can make
 * first and then share with the owner (found by an attack: a bridge took `cli` before the owner's
 * first `aalis chat`, then read and answered everything said there).
 */
export function conversationPrefixOf(client: AdapterClient): string {
  return `${client.platform}:`;
}

/** Refuses a conversation an adapter may not touch: one that began on another platform (not named). Unknown ones pass (the first turn notes them as the adapter's). */
export function checkConversationOf(client: ApiClient, id: string, index: PlatformIndex): void {
  if (client.kind === 'owner') return;
  const platform = index.platformOf(id);
  if (platform !== undefined && platform !== client.platform) throw outside(client, `conversation '${id}' is not one of its platform's`);
}

/** Refuses a conversation the daemon holds that an adapter may not touch: its root (the kernel's) must have begun on the adapter's platform (one the index never noted is refused: fail closed). */
export function checkKnownConversationOf(client: ApiClient, id: string, root: string, index: PlatformIndex): void {
  if (client.kind === 'owner') return;
  if (index.platformOf(root) !== client.platform) throw outside(client, `conversation '${id}' is not one of its platform's`);
}

/** Whether a client may see a conversation (lists and event streams are filtered with this, never refused). */
export function seesConversation(client: ApiClient, id: string, index: PlatformIndex): boolean {
  return client.kind === 'owner' || index.platformOf(id) === client.platform;
}

/** The identity a client answers as: the one it named, else the console's; an adapter must name one of its platform. */
export function actingIdentity(client: ApiClient, by: Identity | undefined, consoleIdentity: Identity, action: string): Identity {
  if (client.kind === 'owner') return by ?? consoleIdentity;
  if (by === undefined) {
    throw new ApiError('bad-request', `adapter '${client.name}' must say whom it ${action} for: give by: the identity it authenticated (platform '${client.platform}'); nothing was done.`, { fix: 'add "by": {"platform": …, "userId": …} to the body' });
  }
  if (by.platform !== client.platform) throw outside(client, `by names platform '${by.platform}'`);
  return by;
}

import { z } from 'zod';
import { definePlugin } from './plugin.js';
import { defineService } from './service.js';
import { type Identity, type OriginTurn, originatingTurn, UNAUTHENTICATED_AUTHOR } from './turn.js';

/** Whose call it is: the owner's has local effect, anybody else's has none. */
export type Principal = 'owner' | 'other';

/** Decides the principal of a turn. */
export interface AuthorityService {
  /**
   * `owner` only when every identity the call acts for is an owner's: the authenticated
   * speaker of the turn that started it and everyone taking part (with `persons`, one and the
   * same owner). An approved call takes the approver as principal. Display names are never trusted.
   */
  principalOf(turn: OriginTurn): Principal;
  /** Whether one identity is an owner's. */
  isOwner(identity: Identity): boolean;
}

/** The authority service descriptor. */
export const authority = defineService<AuthorityService>('authority');

/** Config of the default authority: owner identities per platform. */
export const AuthorityConfigSchema = z.object({
  owners: z.record(z.string().min(1), z.array(z.string().min(1))).default({}),
  /**
   * `true` where each owner is a person of their own, with a space nobody else's calls reach (the
   * docker deployment): a turn is `owner` only when everyone it acts for is one and the same
   * owner. Otherwise another owner's words in a shared conversation would steer a person's calls
   * in their own space, and that person's earlier reads would be shown to the other's turn (found
   * by an attack). Off, owners share one machine's reach, and any of them may steer it.
   */
  persons: z.boolean().default(false),
});
/** Config of the default authority. */
export type AuthorityConfig = z.infer<typeof AuthorityConfigSchema>;

/** The principal rules of docs/reach-contract.md ("Who") over a fixed list of owner identities. */
export function createAuthority(config: { readonly owners: Readonly<Record<string, readonly string[]>>; readonly persons?: boolean }): AuthorityService {
  const owners = new Map(Object.entries(config.owners).map(([platform, ids]) => [platform, new Set(ids)]));
  const isOwner = (identity: Identity) => identity.platform !== UNAUTHENTICATED_AUTHOR.platform && owners.get(identity.platform)?.has(identity.userId) === true;
  return {
    isOwner,
    principalOf(turn) {
      if (turn.approvedBy !== undefined) return isOwner(turn.approvedBy) ? 'owner' : 'other';
      const origin = originatingTurn(turn);
      // A continuation or subtask with no own-turn at its root has nobody to vouch for it.
      if (origin.category !== 'own' || origin.authorised === null) return 'other';
      // Everyone on the way from this turn to its origin acts in it: a continuation in the middle
      // of the chain that took in someone else's words passes them on (found by an attack: only
      // the origin's and the last turn's participants were counted, so a continuation of one with
      // a non-owner participant acted as the owner).
      const acting: Identity[] = [];
      const seen = new Set<OriginTurn>();
      for (let at: OriginTurn | undefined = turn; at !== undefined && !seen.has(at); at = at === origin ? undefined : at.startedBy) {
        seen.add(at);
        if (at.authorised) acting.push(at.authorised);
        acting.push(...(at.participants ?? []));
      }
      if (!acting.every(isOwner)) return 'other';
      // persons: one owner, however many times named
      return config.persons === true && new Set(acting.map((who) => `${who.platform}\0${who.userId}`)).size > 1 ? 'other' : 'owner';
    },
  };
}

/** Provides the default `authority` from config (`{ owners: { <platform>: [<user id>, …] } }`). */
export const authorityPlugin = definePlugin({
  name: 'authority',
  provides: [authority],
  config: AuthorityConfigSchema.default({ owners: {}, persons: false }),
  apply(ctx, config) {
    ctx.provide(authority, createAuthority(config));
  },
});

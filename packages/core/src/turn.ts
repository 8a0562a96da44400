import { z } from 'zod';
import { isWellFormedText } from './well-formed.js';

/** How a turn came to be: a person's own message, a continuation of one, or a subtask it spawned. */
export const ORIGIN_CATEGORIES = ['own', 'continuation', 'subtask'] as const;
/** One of {@link ORIGIN_CATEGORIES}. */
export type OriginCategory = (typeof ORIGIN_CATEGORIES)[number];

/**
 * An id a turn carries: non-empty and well-formed Unicode. A lone surrogate has no UTF-8 form, so
 * two ids differing only in one would be stored, hashed and compared on disk as one (sessions.ts).
 */
const TurnId = z.string().min(1).refine(isWellFormedText, {
  message: 'is not well-formed Unicode (it holds a lone UTF-16 surrogate, which has no UTF-8 form, so two different ids would be stored as one); send the id as well-formed Unicode',
});

/** An identity on one chat platform, as its adapter authenticated it. */
export const IdentitySchema = z.object({
  platform: TurnId,
  userId: TurnId,
});
/** An identity on one chat platform. */
export type Identity = z.infer<typeof IdentitySchema>;

/**
 * The turn a tool call belongs to: what authority needs to decide the principal and what
 * reach needs to issue a credential. Continuations and subtasks carry the turn that started
 * them, whose category and participants they inherit.
 */
export interface OriginTurn {
  /** The conversation (session) the call runs in; `rootId` is the root of a child session. */
  readonly session: { readonly id: string; readonly rootId?: string };
  /** The chat platform the turn arrived on. */
  readonly platform: string;
  /** Who sent the inbound message, as displayed. */
  readonly speaker: Identity;
  /** The identity the adapter authenticated for the speaker; authority trusts only this. */
  readonly authorised: Identity | null;
  /** The inbound turn (message) this call answers. */
  readonly inbound: { readonly id: string };
  /** How the turn came to be. */
  readonly category: OriginCategory;
  /** For continuations and subtasks: the turn that started them. */
  readonly startedBy?: OriginTurn;
  /** Everybody else whose input this call acts on (quoted, mentioned, forwarded). */
  readonly participants?: readonly Identity[];
  /** Set when a person approved this call: the approver becomes the principal. */
  readonly approvedBy?: Identity;
}

/** zod schema for {@link OriginTurn}, for turns that cross a boundary (adapters, HTTP). */
export const OriginTurnSchema: z.ZodType<OriginTurn> = z.lazy(() =>
  z
    .object({
      session: z.object({ id: TurnId, rootId: TurnId.optional() }),
      platform: TurnId,
      speaker: IdentitySchema,
      authorised: IdentitySchema.nullable(),
      inbound: z.object({ id: TurnId }),
      category: z.enum(ORIGIN_CATEGORIES),
      startedBy: OriginTurnSchema.optional(),
      participants: z.array(IdentitySchema).optional(),
      approvedBy: IdentitySchema.optional(),
    })
    .refine((t) => t.category === 'own' || t.startedBy !== undefined, {
      message: 'a continuation or subtask must carry the turn that started it (startedBy)',
      path: ['startedBy'],
    }),
);

/** The turn whose category decides this one's: follows `startedBy` to a person's own turn. */
export function originatingTurn(turn: OriginTurn): OriginTurn {
  let current = turn;
  const seen = new Set<OriginTurn>();
  while (current.category !== 'own' && current.startedBy !== undefined) {
    if (seen.has(current)) break;
    seen.add(current);
    current = current.startedBy;
  }
  return current;
}

/**
 * The person a turn's conversation settings are remembered for: the authenticated identity of
 * the turn that started it (`platform:userId`), or `anonymous`. New conversations start from
 * this person's last used settings, never from somebody else's.
 */
export function settingsScopeOf(turn: OriginTurn): string {
  const who = originatingTurn(turn).authorised;
  return who ? personScopeOf(who) : 'anonymous';
}

/** The scope a person's last used settings are kept under (`platform:userId`): whoever makes a settings change, the settings become that person's last used. */
export function personScopeOf(who: Identity): string {
  return `${who.platform}:${who.userId}`;
}

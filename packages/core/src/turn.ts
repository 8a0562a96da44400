import { z } from 'zod';
import { idProblem } from './well-formed.js';

/** How a turn came to be: a person's own message, a continuation of one, or a subtask it spawned. */
export const ORIGIN_CATEGORIES = ['own', 'continuation', 'subtask'] as const;
/** One of {@link ORIGIN_CATEGORIES}. */
export type OriginCategory = (typeof ORIGIN_CATEGORIES)[number];

/**
 * An id a turn carries: non-empty, and an id by {@link idProblem}'s rule (well-formed Unicode, at
 * most `MAX_ID_BYTES` (256) bytes, no control, formatting or invisible character).
 */
const TurnId = z
  .string()
  .min(1)
  .superRefine((id, ctx) => {
    const problem = idProblem(id);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
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

/**
 * The author of a conversation's message whose speaker no adapter authenticated. Never an owner
 * (authority ignores its platform in the owner list), so a turn acting on such words is `other`.
 */
export const UNAUTHENTICATED_AUTHOR: Identity = Object.freeze({ platform: 'aalis-unauthenticated', userId: 'unauthenticated speaker' });

/** The parts of a conversation's message that say who wrote it (core's `ChatMessage`). */
export interface AuthoredMessage {
  readonly role: string;
  readonly from?: Identity;
  readonly unauthenticated?: true;
}

/**
 * `turn` with the author of every user message in `messages` (what the model reads as it acts)
 * among its participants: words someone else wrote steer the calls the model makes next as much
 * as a forwarded message does (found by an attack: a non-owner's `DO write_file …` line in a
 * group conversation was obeyed in the owner's next turn, with the owner's reach). A message from
 * an unauthenticated speaker counts as {@link UNAUTHENTICATED_AUTHOR}; one with neither (appended
 * by the daemon itself on the owner's choice, as a pod task's returned result) adds nobody.
 */
export function turnWithAuthors(turn: OriginTurn, messages: readonly AuthoredMessage[]): OriginTurn {
  const key = (who: Identity) => `${who.platform}\0${who.userId}`;
  const known = new Set([turn.authorised, ...(turn.participants ?? [])].flatMap((who) => (who ? [key(who)] : [])));
  const added: Identity[] = [];
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const author = m.from ?? (m.unauthenticated ? UNAUTHENTICATED_AUTHOR : undefined);
    if (author === undefined || known.has(key(author))) continue;
    known.add(key(author));
    added.push({ platform: author.platform, userId: author.userId });
  }
  return added.length === 0 ? turn : { ...turn, participants: [...(turn.participants ?? []), ...added] };
}

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

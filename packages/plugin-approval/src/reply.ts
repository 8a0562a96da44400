import type { ApprovalOutcome, Identity } from '@aalis/core';
import { IdentitySchema } from '@aalis/core';
import { z } from 'zod';

/** What a person may answer. */
export const REPLY_DECISIONS = ['approve', 'approve-remember', 'reject'] as const;
/** One of {@link REPLY_DECISIONS}. */
export type ReplyDecision = (typeof REPLY_DECISIONS)[number];

/** A reply from an adapter. `by` must be the identity the adapter authenticated. */
export const ReplyRequestSchema = z.object({
  code: z.string().max(64),
  decision: z.enum(REPLY_DECISIONS, { error: () => `expected one of ${REPLY_DECISIONS.join(', ')}` }),
  by: IdentitySchema,
  reason: z.string().trim().max(2000).optional(),
});
/** A reply from an adapter. */
export interface ReplyRequest {
  readonly code: string;
  readonly decision: ReplyDecision;
  readonly by: Identity;
  /** Shown to the agent with a rejection. */
  readonly reason?: string;
}

/** Why a reply did not answer anything. */
export const REPLY_REFUSALS = ['invalid', 'unknown-code', 'already-answered', 'not-owner', 'not-theirs', 'not-rememberable', 'stopped'] as const;
/** One of {@link REPLY_REFUSALS}. */
export type ReplyRefusal = (typeof REPLY_REFUSALS)[number];

/**
 * What a reply did. Never thrown: an adapter shows `message` to the person either way.
 * `ok: true` means this reply, and no other, answered the ask.
 */
export type ReplyResult =
  | { readonly ok: true; readonly id: string; readonly code: string; readonly outcome: ApprovalOutcome; readonly grantId?: string; readonly message: string }
  | { readonly ok: false; readonly refused: ReplyRefusal; readonly id?: string; readonly message: string };

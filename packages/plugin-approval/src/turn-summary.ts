import type { OriginTurn } from '@aalis/core';
import { IdentitySchema, ORIGIN_CATEGORIES } from '@aalis/core';
import { z } from 'zod';

/** Who asked, as the audit log keeps it (no history, no participants' messages). */
export const TurnSummarySchema = z.object({
  platform: z.string(),
  speaker: IdentitySchema,
  authorised: IdentitySchema.nullable(),
  inbound: z.object({ id: z.string() }),
  category: z.enum(ORIGIN_CATEGORIES),
});
/** Who asked, as the audit log keeps it. */
export type TurnSummary = z.infer<typeof TurnSummarySchema>;

/** A grant's scope as the audit log writes it. */
export const ScopeSchema = z.object({ kind: z.string(), rule: z.string(), target: z.string() });

/** The summary of a turn the audit log keeps. */
export function turnSummaryOf(turn: OriginTurn): TurnSummary {
  return {
    platform: turn.platform,
    speaker: turn.speaker,
    authorised: turn.authorised,
    inbound: { id: turn.inbound.id },
    category: turn.category,
  };
}

import type { DurableStore, LogRead, OriginTurn } from '@aalis/core';
import { IdentitySchema, ORIGIN_CATEGORIES } from '@aalis/core';
import { z } from 'zod';
import { RESOLUTION_SOURCES } from './events.js';
import { ApprovalSubjectSchema } from './subject.js';

/** Name of the audit log in the plugin's store (`<dataDir>/approval/audit.jsonl`). */
export const AUDIT_LOG = 'audit';

const TurnSummarySchema = z.object({
  platform: z.string(),
  speaker: IdentitySchema,
  authorised: IdentitySchema.nullable(),
  inbound: z.object({ id: z.string() }),
  category: z.enum(ORIGIN_CATEGORIES),
});
const ScopeSchema = z.object({ kind: z.string(), rule: z.string(), target: z.string() });
const Base = { v: z.literal(1), at: z.string() };

/** One line of the audit log. Every ask ends in exactly one `resolved` line. */
export const AuditRecordSchema = z.discriminatedUnion('event', [
  z.object({
    ...Base,
    event: z.literal('requested'),
    id: z.string(),
    code: z.string(),
    session: z.string(),
    turn: TurnSummarySchema,
    subject: ApprovalSubjectSchema,
    summary: z.string(),
    rule: z.string(),
    approver: z.enum(['human', 'reviewer']),
    rememberable: z.boolean(),
    /** How long the ask waits once shown. */
    timeoutMs: z.number(),
  }),
  z.object({
    ...Base,
    event: z.literal('resolved'),
    id: z.string(),
    code: z.string().nullable(),
    session: z.string(),
    turn: TurnSummarySchema,
    subject: ApprovalSubjectSchema,
    rule: z.string(),
    via: z.enum(RESOLUTION_SOURCES),
    answeredBy: z.union([IdentitySchema, z.enum(['reviewer', 'policy'])]).nullable(),
    outcome: z.enum(['approved', 'rejected', 'expired']),
    reason: z.string().optional(),
    remembered: z.boolean().optional(),
    grantId: z.string().optional(),
  }),
  z.object({
    ...Base,
    event: z.literal('reply-refused'),
    id: z.string().nullable(),
    code: z.string(),
    by: IdentitySchema,
    refused: z.string(),
    message: z.string(),
  }),
  z.object({
    ...Base,
    event: z.literal('grant-revoked'),
    grantId: z.string(),
    session: z.string(),
    scope: ScopeSchema,
    by: IdentitySchema.nullable(),
  }),
  z.object({
    ...Base,
    event: z.literal('revoke-refused'),
    grantId: z.string(),
    /** The grant's session, when the grant exists (the refusal does not tell the caller). */
    session: z.string().nullable(),
    by: IdentitySchema,
    message: z.string(),
  }),
  z.object({
    ...Base,
    event: z.literal('grant-dropped'),
    grantId: z.string(),
    session: z.string(),
    scope: ScopeSchema,
    /** Why the grant is not (or no longer) in force. */
    reason: z.string(),
  }),
]);
/** One line of the audit log. */
export type AuditRecord = z.infer<typeof AuditRecordSchema>;
/** An audit line as written: the log adds the version and the time. */
export type AuditEntry = AuditRecord extends infer R ? (R extends AuditRecord ? Omit<R, 'v' | 'at'> : never) : never;

/** Who asked, as the audit log keeps it (no history, no participants' messages). */
export function turnSummaryOf(turn: OriginTurn): z.infer<typeof TurnSummarySchema> {
  return {
    platform: turn.platform,
    speaker: turn.speaker,
    authorised: turn.authorised,
    inbound: { id: turn.inbound.id },
    category: turn.category,
  };
}

/** The append-only audit log: who asked, what, which rule, who answered, the outcome, when. */
export class AuditLog {
  constructor(
    private readonly store: DurableStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Appends one line; resolves when it is on disk. Lines are written in call order. */
  append(entry: AuditEntry): Promise<void> {
    return this.store.append(AUDIT_LOG, { v: 1, at: new Date(this.now()).toISOString(), ...entry });
  }

  /** Reads the whole log back (for restart recovery, tools and tests). */
  read(): Promise<LogRead<AuditRecord>> {
    return this.store.readLog(AUDIT_LOG, AuditRecordSchema);
  }
}

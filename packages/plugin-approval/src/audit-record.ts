import { IdentitySchema } from '@aalis/core';
import { z } from 'zod';
import { AuditStateSnapshotSchema } from './audit-state.js';
import { RESOLUTION_SOURCES } from './events.js';
import { ApprovalSubjectSchema } from './subject.js';
import { ScopeSchema, TurnSummarySchema } from './turn-summary.js';

/** Name of the audit log in the plugin's store (`<dataDir>/approval/audit.jsonl`). */
export const AUDIT_LOG = 'audit';

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
    /** The session of the ask replied to (lines written before this field name only the ask). */
    session: z.string().optional(),
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
  z.object({
    ...Base,
    event: z.literal('rotated'),
    /** The file the previous lines were moved to, in the same directory (`null` when there were none). */
    from: z.string().nullable(),
    /** The asks still open and the grants in force when the log rotated: a start needs nothing older. */
    state: AuditStateSnapshotSchema,
  }),
]);
/** One line of the audit log. */
export type AuditRecord = z.infer<typeof AuditRecordSchema>;
/** An audit line as written: the log adds the version and the time. */
export type AuditEntry = AuditRecord extends infer R ? (R extends AuditRecord ? Omit<R, 'v' | 'at'> : never) : never;


/** One line as a record, or `undefined` when it is not one. */
export function parseLine(line: Buffer): AuditRecord | undefined {
  try {
    const parsed = AuditRecordSchema.safeParse(JSON.parse(line.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

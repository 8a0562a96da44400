import type { ApprovalSubject } from '@aalis/core';
import { z } from 'zod';
import { GrantScopeSchema } from './grants.js';
import { type GrantScope, ApprovalSubjectSchema, scopeOf } from './subject.js';
import { TurnSummarySchema } from './turn-summary.js';

/** An ask a run left pending, as the audit log knows it. */
export const LeftPendingSchema = z.object({
  id: z.string(),
  code: z.string(),
  session: z.string(),
  createdAt: z.number(),
  turn: TurnSummarySchema,
  subject: ApprovalSubjectSchema,
});
/** An ask the previous run left pending, as the audit log knows it. */
export type LeftPending = z.infer<typeof LeftPendingSchema> & { readonly subject: ApprovalSubject };

/** A grant the audit log shows in force: created by an approval's `resolved` line, never revoked or dropped since. */
export const AuditedGrantSchema = z.object({
  id: z.string(),
  session: z.string(),
  scope: GrantScopeSchema,
  /** The approval whose `resolved` line created it. */
  approvalId: z.string(),
});
/** A grant the audit log shows in force. */
export type AuditedGrant = z.infer<typeof AuditedGrantSchema> & { readonly scope: GrantScope };

/** What the log says at one point: the asks still open and the grants in force. */
export const AuditStateSnapshotSchema = z.object({
  open: z.array(LeftPendingSchema),
  grants: z.array(AuditedGrantSchema),
});
/** What the log says at one point. */
export type AuditStateSnapshot = z.infer<typeof AuditStateSnapshotSchema>;

/** The lines {@link AuditState.apply} folds; the full record type lives in `audit.ts`. */
type Foldable =
  | { readonly event: 'requested'; readonly id: string; readonly code: string; readonly session: string; readonly at: string; readonly turn: LeftPending['turn']; readonly subject: ApprovalSubject }
  | { readonly event: 'resolved'; readonly id: string; readonly session: string; readonly subject: ApprovalSubject; readonly outcome: string; readonly via: string; readonly grantId?: string | undefined }
  | { readonly event: 'grant-revoked' | 'grant-dropped'; readonly grantId: string }
  | { readonly event: 'rotated'; readonly state: AuditStateSnapshot }
  | { readonly event: 'reply-refused' | 'revoke-refused' };

/**
 * What the audit log says the daemon must know at start, folded line by line: the asks
 * requested and never resolved, and the grants created by a `resolved` line and never revoked
 * or dropped since. Kept up to date as lines are written, so a checkpoint of it lets the next
 * start read only the lines written after that checkpoint.
 */
export class AuditState {
  readonly open = new Map<string, LeftPending>();
  readonly grants = new Map<string, AuditedGrant>();

  /** A state restored from a snapshot (a checkpoint, or the first line of a rotated log). */
  static of(snapshot: AuditStateSnapshot): AuditState {
    const state = new AuditState();
    state.#restore(snapshot);
    return state;
  }

  /** Folds one line in, in log order. */
  apply(record: Foldable): void {
    switch (record.event) {
      case 'rotated':
        // A new log segment starts with everything the previous one left in force.
        this.#restore(record.state);
        return;
      case 'requested':
        this.open.set(record.id, { id: record.id, code: record.code, session: record.session, createdAt: Date.parse(record.at), turn: record.turn, subject: record.subject });
        return;
      case 'resolved': {
        this.open.delete(record.id);
        if (record.outcome === 'approved' && record.via !== 'grant' && record.grantId !== undefined) {
          const scope = scopeOf(record.subject);
          // The first line naming a grant created it; later ones are approvals it already covered.
          if (scope && !this.grants.has(record.grantId)) this.grants.set(record.grantId, { id: record.grantId, session: record.session, scope, approvalId: record.id });
        }
        return;
      }
      case 'grant-revoked':
      case 'grant-dropped':
        this.grants.delete(record.grantId);
        return;
      default:
        return;
    }
  }

  /** A copy to checkpoint or carry into a new segment. */
  snapshot(): AuditStateSnapshot {
    return { open: [...this.open.values()], grants: [...this.grants.values()] };
  }

  #restore(snapshot: AuditStateSnapshot): void {
    this.open.clear();
    this.grants.clear();
    for (const entry of snapshot.open) this.open.set(entry.id, entry as LeftPending);
    for (const grant of snapshot.grants) this.grants.set(grant.id, grant);
  }
}

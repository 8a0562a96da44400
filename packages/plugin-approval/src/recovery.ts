import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApprovalSubject } from '@aalis/core';
import { AUDIT_LOG, type AuditLog, type turnSummaryOf } from './audit.js';
import { type GrantScope, scopeOf } from './subject.js';

/** An ask the previous run left pending, as the audit log knows it. */
export interface LeftPending {
  readonly id: string;
  readonly code: string;
  readonly session: string;
  readonly createdAt: number;
  readonly turn: ReturnType<typeof turnSummaryOf>;
  readonly subject: ApprovalSubject;
}

/** A grant the audit log shows in force: created by an approval's `resolved` line, never revoked or dropped since. */
export interface AuditedGrant {
  readonly id: string;
  readonly session: string;
  readonly scope: GrantScope;
  /** The approval whose `resolved` line created it. */
  readonly approvalId: string;
}

/** What recovery found, and what it could not read. */
export interface RecoveryFindings {
  readonly left: LeftPending[];
  /** The grants the audit log shows in force, by id: the only grants a restart may honour. */
  readonly grants: Map<string, AuditedGrant>;
  /** Problems that did not stop recovery (skipped log lines). */
  readonly warnings: string[];
}

/**
 * Finds the asks a previous run left open. The audit log is the journal of pending asks: an
 * ask is shown only after its `requested` line is on disk, and every answer writes one
 * `resolved` line, so requested-but-never-resolved is exactly what was pending at the crash.
 * Each is then audited as expired once; nothing is ever approved here.
 *
 * It also finds the grants the log shows in force. A grant's `resolved` line is written (and
 * fsync'd) before the grant, and a revocation's line before the grant is removed, so a grant
 * on disk that is not among these was never audited (or was revoked) and is dropped.
 */
export async function findLeftPending(audit: AuditLog, storeDir: string): Promise<RecoveryFindings> {
  const warnings: string[] = [];
  const log = await audit.read();
  if (log.invalid > 0) warnings.push(`the approval audit log has ${log.invalid} line(s) that do not parse; they were skipped.`);
  if (log.torn > 0) {
    // End the torn line, or the next record would be glued to it and lost with it.
    await appendFile(join(storeDir, `${AUDIT_LOG}.jsonl`), '\n');
    warnings.push('the approval audit log ended in a line cut short by a crash; it was skipped and closed.');
  }

  const open = new Map<string, LeftPending>();
  const grants = new Map<string, AuditedGrant>();
  for (const record of log.records) {
    if (record.event === 'resolved' && record.outcome === 'approved' && record.via !== 'grant' && record.grantId !== undefined) {
      const scope = scopeOf(record.subject);
      // The first line naming a grant created it; later ones are approvals it already covered.
      if (scope && !grants.has(record.grantId)) grants.set(record.grantId, { id: record.grantId, session: record.session, scope, approvalId: record.id });
    }
    if (record.event === 'grant-revoked' || record.event === 'grant-dropped') grants.delete(record.grantId);
    if (record.event === 'requested') {
      open.set(record.id, {
        id: record.id,
        code: record.code,
        session: record.session,
        createdAt: Date.parse(record.at),
        turn: record.turn,
        subject: record.subject,
      });
    }
    if (record.event === 'resolved') open.delete(record.id);
  }
  return { left: [...open.values()], grants, warnings };
}

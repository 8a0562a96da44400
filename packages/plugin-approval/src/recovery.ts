import type { ApprovalSubject, DurableStore } from '@aalis/core';
import { describeError } from '@aalis/core';
import { type AuditLog, turnSummaryOf } from './audit.js';
import { readPendingDocument } from './pending.js';

/** An ask the previous run left pending, as far as the store knows it. */
export interface LeftPending {
  readonly id: string;
  readonly code: string;
  readonly session: string;
  readonly createdAt: number;
  readonly turn: ReturnType<typeof turnSummaryOf>;
  readonly subject: ApprovalSubject;
}

/** What recovery found and could not read. */
export interface RecoveryFindings {
  readonly left: LeftPending[];
  /** Problems that did not stop recovery (a damaged pending document, skipped log lines). */
  readonly warnings: string[];
}

/**
 * Finds the asks a previous run left open: those in the pending document, and those the audit
 * log shows requested but never resolved (a crash between the two writes), minus any the log
 * shows resolved. Each is then audited as expired exactly once; nothing is ever approved here.
 */
export async function findLeftPending(store: DurableStore, audit: AuditLog): Promise<RecoveryFindings> {
  const warnings: string[] = [];
  const log = await audit.read();
  if (log.invalid > 0) warnings.push(`the approval audit log has ${log.invalid} line(s) that do not parse; they were skipped.`);
  if (log.torn > 0) warnings.push('the approval audit log ends in a line cut short by a crash; it was skipped.');

  const resolved = new Set<string>();
  const requested = new Map<string, LeftPending>();
  for (const record of log.records) {
    if (record.event === 'resolved') resolved.add(record.id);
    if (record.event === 'requested') {
      requested.set(record.id, {
        id: record.id,
        code: record.code,
        session: record.session,
        createdAt: Date.parse(record.at),
        turn: record.turn,
        subject: record.subject,
      });
    }
  }

  const left = new Map<string, LeftPending>();
  try {
    for (const record of await readPendingDocument(store)) {
      left.set(record.id, {
        id: record.id,
        code: record.code,
        session: record.session,
        createdAt: record.createdAt,
        turn: turnSummaryOf(record.request.turn),
        subject: record.request.subject,
      });
    }
  } catch (error) {
    warnings.push(`the pending approvals document could not be read (${describeError(error)}); the audit log was used instead.`);
  }
  for (const [id, entry] of requested) if (!left.has(id)) left.set(id, entry);
  return { left: [...left.values()].filter((entry) => !resolved.has(entry.id)), warnings };
}

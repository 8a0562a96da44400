import type { ApprovalOutcome } from '@aalis/core';
import type { ResolutionSource } from './events.js';

/** The end of every refusal: what did not happen. */
export const NOTHING_DONE = 'nothing was approved';

/** A rejection by policy: nothing was approved, `reason` says why and what to do. */
export function policyReject(reason: string): ApprovalOutcome {
  return { outcome: 'rejected', by: 'policy', reason };
}

/** An outcome in words, for the person who replied. */
export function describeOutcome(outcome: ApprovalOutcome): string {
  switch (outcome.outcome) {
    case 'approved':
      return outcome.remembered ? 'approved and remembered for this conversation' : 'approved once';
    case 'rejected':
      return `rejected (${outcome.reason})`;
    case 'expired':
      return `expired after ${outcome.afterMs} ms`;
  }
}

/** How a settled ask ended, in words, for a late reply. */
export function describeSettled(settled: { outcome: ApprovalOutcome['outcome']; via: ResolutionSource }): string {
  const by: Record<ResolutionSource, string> = {
    human: 'by a reply',
    reviewer: 'by the reviewer',
    grant: 'by a remembered grant',
    policy: 'by policy',
    timeout: 'because nobody answered in time',
    restart: 'because the daemon restarted',
    shutdown: 'because the daemon stopped',
    cancelled: 'because the call that asked ended',
    error: 'because of an error',
  };
  return `${settled.outcome} ${by[settled.via]}`;
}

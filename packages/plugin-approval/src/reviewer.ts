import type { ApprovalSubject, OriginTurn } from '@aalis/core';
import { defineService } from '@aalis/core';
import { z } from 'zod';

/** What the reviewer is asked. */
export interface ReviewRequest {
  /** The approval's id (the same as in the events and the audit log). */
  readonly id: string;
  readonly turn: OriginTurn;
  readonly subject: ApprovalSubject;
  readonly summary: string;
  /** Aborted when the ask ends without the reviewer: a person answered, it expired, or the kernel stops. */
  readonly signal: AbortSignal;
}

/** The reviewer's answer; a denial's reason goes back to the agent so it can try another way. */
export const ReviewVerdictSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  reason: z.string().trim().min(1, 'a verdict needs a reason').max(4000),
});
/** The reviewer's answer. */
export type ReviewVerdict = z.infer<typeof ReviewVerdictSchema>;

/** An automatic approver (`approver: reviewer`, the seeds' auto_approval). */
export interface ApprovalReviewer {
  review(request: ReviewRequest): Promise<ReviewVerdict>;
}

/** The reviewer service descriptor; provide it from any plugin to enable `approver: reviewer`. */
export const approvalReviewer = defineService<ApprovalReviewer>('approval-reviewer');

import type { ApprovalRequest, ApprovalService, Identity } from '@aalis/core';
import { defineService } from '@aalis/core';
import type { Grant } from './grants.js';
import type { ReplyResult } from './reply.js';

/** An ask as adapters and tools may list it. */
export interface PendingView {
  readonly id: string;
  readonly code: string;
  readonly session: string;
  readonly summary: string;
  readonly subject: ApprovalRequest['subject'];
  /**
   * Whom the asking call acts for: the authenticated speaker of the turn that started it (`null`:
   * nobody vouched for one). An owner deciding an ask sees whether it came from their own agent's
   * work or from someone else in a shared conversation.
   */
  readonly raisedBy: Identity | null;
  readonly rememberable: boolean;
  readonly approver: 'human' | 'reviewer';
  readonly createdAt: number;
  readonly expiresAt: number | undefined;
}

/** Why a revocation was refused: not an owner, another person's grant (persons), no such grant, or the removal could not be saved. */
export const REVOKE_REFUSALS = ['not-owner', 'not-theirs', 'unknown-grant', 'not-saved'] as const;
/** One of {@link REVOKE_REFUSALS}. */
export type RevokeRefusal = (typeof REVOKE_REFUSALS)[number];

/** What revoking a grant did; `message` is always meant for the person. */
export type RevokeResult =
  | { readonly ok: true; readonly grant: Grant; readonly message: string }
  | { readonly ok: false; readonly refused: RevokeRefusal; readonly message: string };

/** The approval service with what adapters need: replies by code, the pending list, the grants. */
export interface ApprovalDeskService extends ApprovalService {
  /** Answers a pending ask by its code; exactly one reply per ask succeeds. Never throws. */
  reply(reply: unknown): Promise<ReplyResult>;
  /** The asks waiting for an answer, optionally of one (root) session. */
  pending(session?: string): readonly PendingView[];
  readonly grants: {
    /** The remembered grants of a (root) session, or of every session without one. */
    list(session?: string): readonly Grant[];
    /**
     * Revokes a grant: later asks it would have answered are asked again. `by` is the identity
     * the caller authenticated; only an owner may revoke (audited either way).
     */
    revoke(id: string, by: Identity): Promise<RevokeResult>;
  };
}

/** The approval desk descriptor (`approval-desk`), for adapters and settings UIs. */
export const approvalDesk = defineService<ApprovalDeskService>('approval-desk');

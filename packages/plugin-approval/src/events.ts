import type { ApprovalOutcome, ApprovalSubject, Identity } from '@aalis/core';

/** Who or what ended an ask (`cancelled`: the tool call that asked ended first, see `withinCall`). */
export const RESOLUTION_SOURCES = ['human', 'reviewer', 'grant', 'policy', 'timeout', 'restart', 'shutdown', 'cancelled', 'error'] as const;
/** One of {@link RESOLUTION_SOURCES}. */
export type ResolutionSource = (typeof RESOLUTION_SOURCES)[number];

/** Payload of `approval/requested`: what an adapter shows, and the code a person replies with. */
export interface ApprovalRequestedEvent {
  readonly id: string;
  /** Short code the person types to answer (see `CODE_ALPHABET`). */
  readonly code: string;
  /** The conversation to show it in. */
  readonly session: { readonly id: string; readonly rootId?: string };
  /** The platform the asking turn came from, and who spoke it. */
  readonly platform: string;
  readonly speaker: Identity;
  readonly inbound: { readonly id: string };
  readonly subject: ApprovalSubject;
  readonly summary: string;
  /** Whether "approve and remember for this session" may be offered. */
  readonly rememberable: boolean;
  /** `reviewer`: an AI reviewer is deciding; a person's reply by code still wins. */
  readonly approver: 'human' | 'reviewer';
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** Payload of `approval/resolved`: how an ask ended (also for asks answered without prompting). */
export interface ApprovalResolvedEvent {
  readonly id: string;
  /** `null` when the ask was answered without being shown (a grant, or the `none` approver). */
  readonly code: string | null;
  readonly session: { readonly id: string; readonly rootId?: string };
  readonly outcome: ApprovalOutcome;
  readonly via: ResolutionSource;
  /** Set when a remembered grant answered, or when a reply created one. */
  readonly grantId?: string;
}

declare module '@aalis/core' {
  interface KernelEvents {
    'approval/requested': (event: ApprovalRequestedEvent) => void;
    'approval/resolved': (event: ApprovalResolvedEvent) => void;
  }
}

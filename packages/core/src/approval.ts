import { defineService } from './service.js';
import type { Identity, OriginTurn } from './turn.js';

/** Why something is asked: the reach rule that asked, or the high-risk gate of a tool. */
export type ApprovalSubject =
  | {
      readonly kind: 'write-path';
      readonly path: string;
      /** The new entry below `path` a command was refused, when `path` is asked as the directory to make it in. */
      readonly toMake?: string;
      readonly rule: 'tier' | 'boundary' | 'landing';
    }
  | {
      readonly kind: 'host-exec';
      /** The command as a person reads it: the shell string as given, or the argv quoted. */
      readonly command: string;
      /** Exactly what runs (a shell string is `['/bin/sh', '-c', string]`); absent when the caller did not name it. */
      readonly argv?: readonly string[];
      /** The real path it starts in; absent when the caller did not name it. */
      readonly cwd?: string;
      /** What is piped to it, when anything is: a script fed to `sh` is the command as much as its argv. */
      readonly stdin?: string;
      readonly rule: 'tier' | 'boundary';
    }
  | { readonly kind: 'network'; readonly via: 'url' | 'command' | 'provider'; readonly rule: 'tier' | 'boundary' }
  | { readonly kind: 'workflow'; readonly workflow: string; readonly rule: 'tier' | 'boundary' }
  | { readonly kind: 'tool'; readonly tool: string; readonly summary: string; readonly rule: 'high-risk' }
  | { readonly kind: 'plan'; readonly summary: string; readonly rule: 'plan' };

/** One ask. */
export interface ApprovalRequest {
  /** The turn the asking call belongs to; adapters deliver the ask to its session. */
  readonly turn: OriginTurn;
  /** What is wanted and which rule asks. */
  readonly subject: ApprovalSubject;
  /** One line a person reads: what the agent wants to do and why it is asked. */
  readonly summary: string;
  /** Whether the person may choose "remember for this session". Never for the control plane. */
  readonly rememberable: boolean;
}

/** How an ask ended. `expired` and `rejected` mean nothing was done. */
export type ApprovalOutcome =
  | {
      readonly outcome: 'approved';
      readonly by: Identity | 'reviewer';
      /** The person chose to remember this grant for the session. */
      readonly remembered: boolean;
    }
  | { readonly outcome: 'rejected'; readonly by: Identity | 'reviewer' | 'policy'; readonly reason: string }
  | { readonly outcome: 'expired'; readonly afterMs: number };

/** The closed set of outcomes. */
export const APPROVAL_OUTCOMES = ['approved', 'rejected', 'expired'] as const;

/** The approval service: one gate, answered exactly once. `@aalis/plugin-approval` implements it. */
export interface ApprovalService {
  /** Asks and waits for the answer; never resolves `approved` for a request nobody answered. */
  ask(request: ApprovalRequest): Promise<ApprovalOutcome>;
}

/** The approval service descriptor. */
export const approval = defineService<ApprovalService>('approval');

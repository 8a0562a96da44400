import { AalisError, defineService } from '@aalis/core';
import type { MovedAside } from './moved-aside.js';
import type { SandboxRunRequest } from './run-request.js';
import type { SandboxPlan } from './sandbox-plan.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/** The sandbox backends there are. */
export const SANDBOX_BACKENDS = ['linux', 'darwin', 'docker'] as const;
/** One of {@link SANDBOX_BACKENDS}. */
export type SandboxBackend = (typeof SANDBOX_BACKENDS)[number];

/** What became of a command. */
export interface SandboxRunResult {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit code, or null when a signal ended it. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  /** Output was cut at `maxOutputBytes`. */
  readonly truncated: boolean;
  /** The sandbox refused at least one write (detected by the backend, not guessed from the exit code). */
  readonly writeDenied: boolean;
  /** The real paths whose writes were refused, where the backend can tell. */
  readonly deniedWrites: readonly string[];
  /**
   * The refused writes the backend kept aside (asked for with `keepRefused`): `paths` are exactly
   * the entries the command wrote that the policy refused. Commit or discard them by `id`; kept
   * writes are discarded on their own after a bounded time.
   */
  readonly keptWrites?: KeptWrites;
  /**
   * Entries the command wrote that changed on the host since it started (another run, the user):
   * the host's version stays; `keptAt` is where the command's version was put, when it could be.
   */
  readonly conflicts?: readonly CommitConflictEntry[];
  /**
   * Entries the command wrote that the sandbox removed or moved aside ({@link MovedAside}), as
   * data: never only as text on `stderr`, which stays the command's own. Absent when none.
   */
  readonly movedAside?: readonly MovedAside[];
}

/** One write that lost to a host change; see {@link SandboxRunResult.conflicts}. */
export interface CommitConflictEntry {
  readonly path: string;
  readonly keptAt?: string;
}

/** Refused writes kept aside after a run, not on the host; see {@link SandboxService.commitKept}. */
export interface KeptWrites {
  readonly id: string;
  readonly paths: readonly string[];
}

/** What committing kept writes did. */
export interface KeptCommit {
  /** Paths now on the host. */
  readonly committed: readonly string[];
  /** Paths the policy given still refuses: not on the host. */
  readonly refused: readonly string[];
  /** Paths that changed on the host since the command started: the host's version stays. */
  readonly conflicts: readonly string[];
  /** Lines for the command's stderr: what was not done and why. */
  readonly notes: string;
}

/** One line of a backend's self-check, for `aalis doctor`. */
export interface SandboxCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  /** The command or step that fixes a failed check. */
  readonly fix?: string;
}

/** What a backend found about this machine. */
export interface SandboxProbe {
  readonly backend: SandboxBackend;
  readonly available: boolean;
  readonly checks: readonly SandboxCheck[];
}

/** A sandbox backend: runs commands under a {@link SandboxPolicy}, or refuses to run them at all. */
export interface SandboxService {
  readonly backend: SandboxBackend;
  /** What works on this machine. Never throws. */
  probe(): Promise<SandboxProbe>;
  /**
   * What {@link run} would execute for `request` now, built by the same code the run uses, without
   * running anything (`aalis policy` prints it). Throws {@link SandboxUnavailableError} where the run would.
   */
  plan(request: SandboxRunRequest): Promise<SandboxPlan>;
  /** Runs one command: the plan it builds, exactly. Throws {@link SandboxUnavailableError} and runs nothing when it cannot enforce the policy. */
  run(request: SandboxRunRequest): Promise<SandboxRunResult>;
  /**
   * Commits kept writes (`paths`, a subset of {@link KeptWrites.paths}) judged by `policy`, the
   * run's policy with what was approved since; the rest of them is discarded. Throws when `id` is
   * unknown or gone (timed out, discarded): nothing was committed.
   */
  commitKept?(id: string, policy: SandboxPolicy, paths: readonly string[]): Promise<KeptCommit>;
  /** Discards kept writes; an unknown `id` is nothing to do. */
  discardKept?(id: string): Promise<void>;
  /**
   * Releases what the service holds between runs (kept writes and their timers, worker threads).
   * The kernel calls it when the plugin providing the service stops ({@link sandboxPlugin}), so a
   * daemon's or a one-shot command's end leaves nothing of it behind.
   */
  close?(): Promise<void>;
}

/** The sandbox service descriptor; the deployment decides which backend provides it. */
export const sandbox = defineService<SandboxService>('sandbox');

/** Why a sandbox did not run a command: it cannot enforce the policy here, or the request broke the contract. */
export const SANDBOX_ERROR_CODES = ['sandbox-unavailable', 'invalid-run-request'] as const;
/** One of {@link SANDBOX_ERROR_CODES}. */
export type SandboxErrorCode = (typeof SANDBOX_ERROR_CODES)[number];

/**
 * The sandbox cannot enforce a policy here, so the command did not run (fail closed).
 * `reason` says what is missing, `fix` what the user can do about it.
 */
export class SandboxUnavailableError extends AalisError<SandboxErrorCode> {
  override readonly name: string = 'SandboxUnavailableError';
  declare readonly fix: string;
  constructor(
    readonly backend: SandboxBackend,
    readonly reason: string,
    fix: string,
    code: SandboxErrorCode = 'sandbox-unavailable',
  ) {
    super(code, `the ${backend} sandbox cannot run this command: ${reason}. Fix: ${fix}`, { fix });
  }
}

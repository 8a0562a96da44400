import { AalisError, defineService } from '@aalis/core';
import type { SandboxRunRequest } from './run-request.js';

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
  /** Runs one command. Throws {@link SandboxUnavailableError} and runs nothing when it cannot enforce the policy. */
  run(request: SandboxRunRequest): Promise<SandboxRunResult>;
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

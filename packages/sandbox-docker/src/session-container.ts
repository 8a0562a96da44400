import { isLiveStdin, type SandboxRunRequest, SandboxUnavailableError } from '@aalis/api-reach';
import type { DockerRunResult, DockerSandbox } from './docker-sandbox.js';
import type { MountPlan } from './mount-plan.js';
import type { ContainerProfile } from './profile.js';
import { withDeadline } from './run-args.js';
import { validateSessionCommand } from './validate-request.js';
import { REMOVE_CONTAINER } from './container-removal.js';

const EXEC_DEADLINE_GRACE_S = 5;
/** How often a command that met a section holding its container paused is started again. */
const PAUSED_RETRIES = 5;

/**
 * An exec refused because a section held the container still, so nothing of it ran: the engine's
 * words on stderr for one it paused; for one whose freezer was written directly
 * (cgroup-freezer.ts), runc's, which the docker client prints on stdout with exit 126, and then
 * nothing else. A command could print either itself: it is only started again, as it was.
 */
export function pausedRefusal(outcome: { readonly code: number | null; readonly stdout: { text(): string }; readonly stderr: string }): boolean {
  if (outcome.code === 0) return false;
  if (/^Error response from daemon: Container .* is paused/m.test(outcome.stderr)) return true;
  return outcome.code === 126 && outcome.stderr === '' && /^OCI runtime exec failed: [^\n]*\bpaused\b[^\n]*\n?$/.test(outcome.stdout.text());
}

/** One command in a session: the policy, profile and identity are the session's. */
export type SessionExecRequest = Pick<SandboxRunRequest, 'argv' | 'stdin' | 'timeoutMs' | 'maxOutputBytes' | 'signal'> & {
  /** The command's env, through the same allow list; the session's env when absent. */
  readonly env?: Readonly<Record<string, string>>;
};

/**
 * A container kept running for one session (a terminal), opened by
 * {@link DockerSandbox.openSession}. It is pinned to the policy it started with: a changed
 * policy means closing it and opening another. Commands share its pid and memory limits; a
 * command that times out is killed with the whole session, since `docker exec` cannot kill
 * the process tree it started.
 */
export class SessionContainer {
  private closed = false;

  constructor(
    private readonly sandbox: DockerSandbox,
    /** The container's name on the engine. */
    readonly name: string,
    private readonly plan: MountPlan,
    private readonly env: Readonly<Record<string, string>>,
    private readonly profile: ContainerProfile,
  ) {}

  /** Whether the session can still run commands. */
  get open(): boolean {
    return !this.closed;
  }

  /** Runs one command in the session. Throws {@link SandboxUnavailableError} once the session is closed. */
  async exec(request: SessionExecRequest): Promise<DockerRunResult> {
    if (this.closed) throw new SandboxUnavailableError('docker', `the session container ${this.name} is closed`, 'open a new session');
    validateSessionCommand(request);
    // what a process an earlier command left running wrote where it may not since that command's
    // check: removed before this command runs (the container held still meanwhile), and said
    const left = await this.sweep();
    const result = await this.run(request);
    const note = sweptNote(left, 'since the last command, by a process an earlier command left running');
    return note === '' ? result : { ...result, stderr: result.stderr + note, writeDenied: true, deniedWrites: [...new Set([...result.deniedWrites, ...left.removed])] };
  }

  private async run(request: SessionExecRequest): Promise<DockerRunResult> {
    const env = this.sandbox.envFor(request.env ?? this.env, this.profile);
    const args = ['exec', '--workdir', this.plan.cwd, ...Object.keys(env).flatMap((name) => ['--env', name])];
    if (request.stdin !== undefined) args.push('--interactive');
    const timeoutMs = Math.min(request.timeoutMs, this.profile.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
    // The exec'd command has its own hard deadline too: it dies then even if this process does not.
    const seconds = Math.ceil(timeoutMs / 1000) + EXEC_DEADLINE_GRACE_S;
    const deadlineAt = Date.now() + seconds * 1000;
    args.push(this.name, ...withDeadline(request.argv, seconds));
    const outcome = await this.execWhenUnheld(args, env, request, timeoutMs);
    const lost = await this.sandbox.supervise(this.name, outcome, deadlineAt, 'session');
    if (lost !== undefined) {
      this.closed = true; // supervise removed it, or it could not be reached: no more commands in it
      return this.sandbox.finish(this.plan, outcome, lost);
    }
    if (outcome.timedOut || outcome.aborted) this.closed = true;
    else if (/^Error response from daemon: (No such container|Container .* is not running)/m.test(outcome.stderr)) {
      this.closed = true;
      throw new SandboxUnavailableError('docker', `the session container ${this.name} is gone (${outcome.stderr.trim()})`, 'open a new session');
    }
    return this.sandbox.finish(this.plan, outcome, undefined, this.name);
  }

  /**
   * Starts the command once no other run's set-up or check holds this container paused: the
   * engine refuses an exec into a paused container ("is paused"), runc one into a frozen one
   * ({@link pausedRefusal}). One that met a section begun in between is started again (nothing of
   * it ran), unless its stdin is live and may have been read from: then the refusal is the
   * command's result.
   */
  private async execWhenUnheld(args: string[], env: Record<string, string>, request: SessionExecRequest, timeoutMs: number) {
    for (let attempt = 0; ; attempt++) {
      await this.sandbox.untilNoSection();
      const outcome = await this.sandbox.attach(this.name, args, env, request, timeoutMs);
      const paused = pausedRefusal(outcome);
      if (!paused || attempt === PAUSED_RETRIES || isLiveStdin(request.stdin)) return outcome;
    }
  }

  /**
   * The writes the mounts could not stop that are on the host now (a process an earlier command
   * left running made them after that command's check), removed with the container held still
   * (`docker pause`, under the engine's hold: see hold-still.ts); none while the session is closed.
   */
  private async sweep(): Promise<SessionSweep> {
    if (this.closed) return { removed: [], failed: [] };
    const { after, failedRemovals } = await this.sandbox.sweepDenied(this.plan, [this.name]);
    return { removed: after.denied.map((w) => w.path), failed: failedRemovals };
  }

  /**
   * Kills and removes the session container, then removes what it wrote where it may not since
   * its last command. Before, a process a command
   * left running could put a git hook or an `.envrc` on the host after that command's check, and
   * it stayed for good. Idempotent.
   */
  async close(): Promise<SessionSweep> {
    const wasOpen = !this.closed;
    this.closed = true;
    await this.sandbox.cli.call([...REMOVE_CONTAINER, this.name]);
    if (!wasOpen && this.closedSweep !== undefined) return this.closedSweep;
    // nothing of it runs any more, but another container of the workspace may
    const { after, failedRemovals } = await this.sandbox.sweepDenied(this.plan, []);
    this.closedSweep = { removed: after.denied.map((w) => w.path), failed: failedRemovals };
    return this.closedSweep;
  }

  private closedSweep?: SessionSweep;
}

/** What a session found on the host that it may not write, outside a command's own check. */
export interface SessionSweep {
  /** Removed from the host. */
  readonly removed: readonly string[];
  /** Could not be removed: still there, with why. */
  readonly failed: readonly string[];
}

function sweptNote(swept: SessionSweep, when: string): string {
  if (swept.removed.length === 0) return '';
  const failed = swept.failed.length > 0 ? `; these could not be removed and are still there: ${swept.failed.join(', ')}` : '';
  return `aalis: written where the policy does not allow ${when}, and removed: ${swept.removed.join(', ')}${failed}\n`;
}

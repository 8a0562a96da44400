import { type SandboxRunRequest, SandboxUnavailableError } from '@aalis/api-reach';
import type { DockerRunResult, DockerSandbox } from './docker-sandbox.js';
import type { MountPlan } from './mount-plan.js';
import type { ContainerProfile } from './profile.js';
import { withDeadline } from './run-args.js';
import { validateSessionCommand } from './validate-request.js';

const EXEC_DEADLINE_GRACE_S = 5;

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
    const env = this.sandbox.envFor(request.env ?? this.env, this.profile);
    const args = ['exec', '--workdir', this.plan.cwd, ...Object.keys(env).flatMap((name) => ['--env', name])];
    if (request.stdin !== undefined) args.push('--interactive');
    const timeoutMs = Math.min(request.timeoutMs, this.profile.maxTimeoutMs ?? Number.POSITIVE_INFINITY);
    // The exec'd command has its own hard deadline too: it dies then even if this process does not.
    const seconds = Math.ceil(timeoutMs / 1000) + EXEC_DEADLINE_GRACE_S;
    const deadlineAt = Date.now() + seconds * 1000;
    args.push(this.name, ...withDeadline(request.argv, seconds));
    const outcome = await this.sandbox.attach(this.name, args, env, request, timeoutMs);
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
    return this.sandbox.finish(this.plan, outcome, undefined, () => this.hold());
  }

  /**
   * Freezes the container (`docker pause`: its cgroup's freezer) so nothing it left running can
   * move a path while the host removes what the command wrote where it may not. When it cannot be
   * frozen, the session is closed (its processes killed with the container) instead.
   */
  private async hold(): Promise<() => Promise<void>> {
    const paused = await this.sandbox.cli.call(['pause', this.name]);
    if (paused.code === 0) return async () => void (await this.sandbox.cli.call(['unpause', this.name]));
    await this.close();
    return async () => {};
  }

  /** Kills and removes the session container. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    await this.sandbox.cli.call(['rm', '--force', this.name]);
  }
}

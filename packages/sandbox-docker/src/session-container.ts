import { type SandboxRunRequest, SandboxUnavailableError } from '@aalis/api-reach';
import { type DockerRunResult, type DockerSandbox, removeAll } from './docker-sandbox.js';
import { deniedWritesAfter, type MountPlan } from './mount-plan.js';
import type { ContainerProfile } from './profile.js';
import { withDeadline } from './run-args.js';
import { validateSessionCommand } from './validate-request.js';
import { REMOVE_CONTAINER } from './container-removal.js';

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

  /**
   * The writes the mounts could not stop that are on the host now (a process an earlier command
   * left running made them after that command's check), removed with the container held still;
   * none while the session is closed.
   */
  private async sweep(): Promise<SessionSweep> {
    const first = await deniedWritesAfter(this.plan);
    if (first.denied.length === 0 || this.closed) return { removed: [], failed: [] };
    const release = await this.hold();
    try {
      const again = await deniedWritesAfter(this.plan);
      const failed = await removeAll(again.denied);
      return { removed: again.denied.map((w) => w.path), failed };
    } finally {
      await release();
    }
  }

  /**
   * Kills and removes the session container, then removes what it wrote where it may not since
   * its last command (nothing of it runs any more: no hold needed). Before, a process a command
   * left running could put a git hook or an `.envrc` on the host after that command's check, and
   * it stayed for good. Idempotent.
   */
  async close(): Promise<SessionSweep> {
    const wasOpen = !this.closed;
    this.closed = true;
    await this.sandbox.cli.call([...REMOVE_CONTAINER, this.name]);
    if (!wasOpen && this.closedSweep !== undefined) return this.closedSweep;
    const after = await deniedWritesAfter(this.plan);
    this.closedSweep = { removed: after.denied.map((w) => w.path), failed: await removeAll(after.denied) };
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

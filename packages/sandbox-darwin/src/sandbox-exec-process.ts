import { BoundedOutput, feedStdin, type SandboxStdin, SandboxUnavailableError } from '@aalis/api-reach';
import { execa } from 'execa';
import { sandboxExecArgv } from './darwin-plan.js';

/** One command for {@link runSandboxExec}: the profile is already built. */
export interface SandboxExecRun {
  readonly sandboxExec: string;
  readonly profile: string;
  /** The profile's parameters, passed as `-D KEY=VALUE` (see `seatbeltInvocation`). */
  readonly params?: Readonly<Record<string, string>>;
  readonly argv: readonly [string, ...string[]];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Given whole, or a live source fed as the command reads it (api-reach's `feedStdin`). */
  readonly stdin?: SandboxStdin;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
}

/** What the process did, before refused writes are looked for. */
export interface SandboxExecOutcome {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly truncated: boolean;
}

/**
 * sandbox-exec's own complaint when it could not apply the profile (it then runs nothing): its
 * first stderr line, prefixed `sandbox-exec:`, with a failing exit. A command it could not find
 * (`execvp() ... failed`) is the command's failure, reported as a normal result.
 */
export function sandboxExecError(stderr: string, exitCode: number | null): string | undefined {
  const first = stderr.split('\n', 1)[0] ?? '';
  if (exitCode === 0 || !first.startsWith('sandbox-exec: ') || first.includes('execvp()')) return undefined;
  return first.slice('sandbox-exec: '.length);
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    // The command leads its own process group (detached), so this reaches every descendant.
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Runs `sandbox-exec -D KEY=VALUE… -p PROFILE -- argv` with exactly `env`, in its own process group. The
 * timeout and the abort signal kill the whole group; when the command exits, what it left
 * running in the group is killed too, so nothing sandboxed outlives the call. Output beyond
 * `maxOutputBytes` per stream is dropped, the process keeps running.
 */
export async function runSandboxExec(run: SandboxExecRun): Promise<SandboxExecOutcome> {
  const [file, ...args] = sandboxExecArgv(run);
  const child = execa(file, args, {
    cwd: run.cwd,
    env: { ...run.env },
    extendEnv: false,
    detached: true,
    buffer: false,
    reject: false,
    stdin: run.stdin === undefined ? 'ignore' : 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    encoding: 'buffer',
  });
  const stdout = new BoundedOutput(run.maxOutputBytes);
  const stderr = new BoundedOutput(run.maxOutputBytes);
  stdout.attach(child.stdout);
  stderr.attach(child.stderr);
  let feed: ReturnType<typeof feedStdin> | undefined;
  if (run.stdin !== undefined && child.stdin !== null) {
    child.stdin.on('error', () => {}); // EPIPE when the command does not read its input.
    feed = feedStdin(run.stdin, child.stdin);
  }

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, run.timeoutMs);
  const onAbort = () => killGroup(child.pid);
  run.signal?.addEventListener('abort', onAbort, { once: true });
  if (run.signal?.aborted) onAbort();
  // A background descendant holding the pipes open would keep the streams from ending.
  child.on('exit', () => killGroup(child.pid));

  try {
    const result = await child;
    if (result.exitCode === undefined && result.signal === undefined) {
      throw new SandboxUnavailableError('darwin', `sandbox-exec could not be started (${result.message})`, 'check that /usr/bin/sandbox-exec exists and is executable');
    }
    const own = sandboxExecError(stderr.text(), result.exitCode ?? null);
    if (own !== undefined) {
      throw new SandboxUnavailableError('darwin', `sandbox-exec refused to apply the profile, so the command did not run: ${own}`, 'report this profile error; it is a bug in @aalis/sandbox-darwin or an unsupported macOS');
    }
    return {
      stdout: stdout.text(),
      stderr: stderr.text(),
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      timedOut,
      truncated: stdout.truncated || stderr.truncated,
    };
  } finally {
    clearTimeout(timer);
    run.signal?.removeEventListener('abort', onAbort);
    feed?.stop(); // the run is over: a live stdin is closed
    killGroup(child.pid);
  }
}

import { BoundedOutput, feedStdin, type SandboxRunRequest, SandboxUnavailableError } from '@aalis/api-reach';
import type { CliResult, DockerCli } from './docker-cli.js';

/** What an attached command takes from its request. */
export type AttachRequest = Pick<SandboxRunRequest, 'stdin' | 'signal' | 'maxOutputBytes'>;

/** How an attached client command ended. */
export interface AttachOutcome {
  readonly code: number | null;
  readonly stdout: BoundedOutput;
  readonly stderr: string;
  readonly stderrTruncated: boolean;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /**
   * After a timeout or abort: whether the container was removed (`done`, or it was already gone)
   * or the engine could not be told (`failed`: the container may still run).
   */
  readonly removal?: 'done' | 'failed';
}

/** Whether an `rm --force` removed the container or found it already gone. */
export function removedOrGone(result: CliResult): boolean {
  return result.code === 0 || /No such container/i.test(result.stderr);
}

/**
 * Runs a docker client command (`run` or `exec`) attached: stdin fed (whole, or live as the command
 * reads it), output kept to `limit`
 * bytes a stream. On timeout or abort the container `name` is killed and removed (`rm --force`),
 * the client killed, and the removal repeated after the client exits, before this resolves.
 */
export function attachClient(cli: DockerCli, name: string, args: string[], env: Record<string, string>, request: AttachRequest, timeoutMs: number, limit: number): Promise<AttachOutcome> {
  const stdout = new BoundedOutput(limit);
  const stderr = new BoundedOutput(limit);
  // Aborted while the run was prepared: no client is started. A `docker run` client killed at once
  // still had its create sent, and the engine made the container after both removals below had
  // found none: a Created container outlived the run (seen on a shared engine, where the next
  // run's tests found it). The container `name` is removed all the same (a session's, on exec).
  if (request.signal?.aborted) {
    return cli.call(['rm', '--force', name]).then((removed) => ({ code: null, stdout, stderr: '', stderrTruncated: false, timedOut: false, aborted: true, removal: removedOrGone(removed) ? 'done' : 'failed' }));
  }
  const child = cli.spawn(args, env);
  stdout.attach(child.stdout);
  stderr.attach(child.stderr);
  child.stdin?.on('error', () => {}); // the command may exit without reading its stdin
  // the client's stdin is the container's (`--interactive`: the engine's attach stream); a live
  // one is fed as the command reads it, and stops with the client
  const feed = request.stdin !== undefined && child.stdin ? feedStdin(request.stdin, child.stdin) : undefined;
  if (feed === undefined) child.stdin?.end();
  let timedOut = false;
  let aborted = false;
  let removing: Promise<CliResult> | undefined;
  const removeNow = () => {
    // `rm -f` kills and removes in one step; the client is killed after it so it cannot recreate state.
    removing ??= cli.call(['rm', '--force', name]).finally(() => child.kill('SIGKILL'));
  };
  const timer = setTimeout(() => {
    timedOut = true;
    removeNow();
  }, timeoutMs);
  const onAbort = () => {
    aborted = true;
    removeNow();
  };
  request.signal?.addEventListener('abort', onAbort, { once: true });
  return new Promise<AttachOutcome>((resolve, reject) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new SandboxUnavailableError('docker', `the docker client ${cli.binary} could not start (${error.message})`, 'install the docker CLI (apt-get install docker.io) or set its path'));
    });
    child.on('close', async (code) => {
      clearTimeout(timer);
      feed?.stop();
      request.signal?.removeEventListener('abort', onAbort);
      let removal: 'done' | 'failed' | undefined;
      if (removing !== undefined) {
        const first = await removing;
        // The create may have finished after the first removal: make sure it is gone.
        const again = await cli.call(['rm', '--force', name]);
        removal = [first, again].some(removedOrGone) ? 'done' : 'failed';
      }
      resolve({ code, stdout, stderr: stderr.text(), stderrTruncated: stderr.truncated, timedOut, aborted, ...(removal !== undefined ? { removal } : {}) });
    });
  });
}

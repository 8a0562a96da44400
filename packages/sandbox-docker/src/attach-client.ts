import { BoundedOutput, feedStdin, type SandboxRunRequest, SandboxUnavailableError } from '@aalis/api-reach';
import type { CliResult, DockerCli } from './docker-cli.js';
import { REMOVE_CONTAINER } from './container-removal.js';

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

/** How long an aborted or timed-out client gets to end by itself, its container removed again and again, before it is killed. */
const REMOVAL_GRACE_MS = 10_000;
/** How often the container is removed again meanwhile. */
const REMOVAL_RETRY_MS = 100;

/** Whether an `rm --force` removed the container or found it already gone. */
export function removedOrGone(result: CliResult): boolean {
  return result.code === 0 || /No such container/i.test(result.stderr);
}

/**
 * Runs a docker client command (`run` or `exec`) attached: stdin fed (whole, or live as the command
 * reads it), output kept to `limit`
 * bytes a stream. On timeout or abort the container `name` is killed and removed (`rm --force`),
 * again until the client has ended (killed only past a grace), and once more after it exits, before
 * this resolves.
 */
export function attachClient(cli: DockerCli, name: string, args: string[], env: Record<string, string>, request: AttachRequest, timeoutMs: number, limit: number): Promise<AttachOutcome> {
  const stdout = new BoundedOutput(limit);
  const stderr = new BoundedOutput(limit);
  // Aborted while the run was prepared: no client is started. A `docker run` client killed at once
  // still had its create sent, and the engine made the container after both removals below had
  // found none: a Created container outlived the run (seen on a shared engine, where the next
  // run's tests found it). The container `name` is removed all the same (a session's, on exec).
  if (request.signal?.aborted) {
    return cli.call([...REMOVE_CONTAINER, name]).then((removed) => ({ code: null, stdout, stderr: '', stderrTruncated: false, timedOut: false, aborted: true, removal: removedOrGone(removed) ? 'done' : 'failed' }));
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
  let closed = false;
  const removeNow = () => {
    // `rm -f` kills and removes in one step. The client is not killed at once: one killed just
    // after its start had sent its create, which the engine finished after every removal here had
    // found no container (a Created container left, about one abort in eight 0-30 ms after the
    // client's spawn). It is left to end by itself, which it does once its container is gone (a
    // start of a removed container fails; an attached one ends), and the removal is repeated until
    // then; killed only past REMOVAL_GRACE_MS (an engine that does not answer).
    removing ??= (async () => {
      const first = await cli.call([...REMOVE_CONTAINER, name]);
      const end = Date.now() + REMOVAL_GRACE_MS;
      while (!closed && Date.now() < end) {
        await new Promise((r) => setTimeout(r, REMOVAL_RETRY_MS));
        if (!closed) await cli.call([...REMOVE_CONTAINER, name]);
      }
      if (!closed) child.kill('SIGKILL');
      return first;
    })();
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
      closed = true;
      clearTimeout(timer);
      reject(new SandboxUnavailableError('docker', `the docker client ${cli.binary} could not start (${error.message})`, 'install the docker CLI (apt-get install docker.io) or set its path'));
    });
    child.on('close', async (code) => {
      closed = true;
      clearTimeout(timer);
      feed?.stop();
      request.signal?.removeEventListener('abort', onAbort);
      let removal: 'done' | 'failed' | undefined;
      if (removing !== undefined) {
        const first = await removing;
        // The create may have finished after the first removal: make sure it is gone.
        const again = await cli.call([...REMOVE_CONTAINER, name]);
        removal = [first, again].some(removedOrGone) ? 'done' : 'failed';
      }
      resolve({ code, stdout, stderr: stderr.text(), stderrTruncated: stderr.truncated, timedOut, aborted, ...(removal !== undefined ? { removal } : {}) });
    });
  });
}

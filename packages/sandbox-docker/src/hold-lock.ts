import { createServer, type Server } from 'node:net';
import { AalisError } from '@aalis/core';

/** The engine's hold lock could not be taken in time: nothing was run. */
export class HoldLockError extends AalisError<'docker-hold-lock'> {
  override readonly name = 'HoldLockError';
}

/** How often a held lock is tried again. */
const RETRY_MS = 5;

/** This process's sections, one after another, before any takes the lock between processes. */
const inProcess = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` while holding the lock `name` among every process of this machine's network
 * namespace: a socket bound in the abstract namespace (`\0name`), which only one process can
 * bind and which the kernel frees when its holder dies, however it dies. No file is left to judge
 * stale (a lock file's stale-holder takeover races a second taker). Waits at most `waitMs`, then
 * throws {@link HoldLockError} and `fn` does not run.
 */
export async function withHoldLock<T>(name: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
  const before = inProcess.get(name) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  const chain = before.then(() => mine);
  inProcess.set(name, chain);
  try {
    const end = Date.now() + waitMs;
    // this process's own sections wait no longer than another process's would
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), waitMs);
    });
    const waited = await Promise.race([before.then(() => 'ready' as const), late]);
    clearTimeout(timer);
    if (waited === 'late') throw heldTooLong(waitMs);
    const server = await bindWithin(name, Math.max(0, end - Date.now()));
    try {
      return await fn();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  } finally {
    done();
    if (inProcess.get(name) === chain) inProcess.delete(name);
  }
}

function heldTooLong(waitMs: number): HoldLockError {
  return new HoldLockError(
    'docker-hold-lock',
    `the docker sandbox's hold was held by another run for more than ${Math.round(waitMs / 1000)} s (runs on one engine are set up and checked one at a time, so none can move a path another's mounts go through; a check of a tree of millions of files can take that long); nothing was run`,
    {
      fix: 'run the command again; if it keeps happening, look for what holds it: `ss -xlp | grep aalis-docker-hold` names the process (an aalis process, or another process of a user the engine answers: the name holds the engine\'s ID, which others cannot read)',
    },
  );
}

async function bindWithin(name: string, waitMs: number): Promise<Server> {
  const end = Date.now() + waitMs;
  for (;;) {
    const bound = await bind(name);
    if (bound instanceof Error) {
      if ((bound as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        throw new HoldLockError('docker-hold-lock', `the docker sandbox could not take its hold lock (${bound.message}); nothing was run`, {
          fix: 'run the command on Linux, where the lock is an abstract unix socket, or report this',
        });
      }
      if (Date.now() >= end) throw heldTooLong(waitMs);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      continue;
    }
    return bound;
  }
}

function bind(name: string): Promise<Server | Error> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (error) => resolve(error));
    server.listen({ path: `\0${name}`, exclusive: true }, () => resolve(server));
  });
}

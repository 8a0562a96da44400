import { timingSafeEqual } from 'node:crypto';
import { lstatSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { SandboxService } from '@aalis/api-reach';
import { sandboxOf } from './backends.js';
import { execCommand } from './exec.js';
import { type ClientFrame, ClientFrameSchema, type ExecRequest, ExecRequestSchema, type HelperFrame, lineReader, MAX_LINE_BYTES, REQUEST_LINE_BYTES, TOKEN_LINE_BYTES, TokenLineSchema } from './exec-wire.js';
import { runGuarded } from './guarded.js';
import { KeptSessions } from './kept-sessions.js';
import type { CliIo } from './io.js';

/*
 * The exec helper: a process of the user's own that runs `aalis exec` for the next invocations of
 * the command, so that each one costs a node start and a connection instead of the bundle's load,
 * a runtime's start, a sandbox probe and a launcher's start (the sandbox service, its launcher and
 * the scan's kept walks stay from one command to the next). bin/aalis.cjs starts it after a run
 * that found none (bin/exec-client.cjs), detached; it ends after `idleMs` without a request, or
 * once its socket is no longer at its path.
 *
 * Each request is run as a one-shot `aalis exec` would run it in the client's process: in the
 * client's directory, with its environment and umask (the helper's own are replaced for the
 * request), its arguments, its terminal's questions (asked back through the client) and its
 * signals. One request at a time: those are process-wide, so a second client is declined and runs
 * the command itself, as it would with no helper. The sandbox service is kept per backend, cache
 * directory, umask and environment (a run whose environment differs gets a service of its own, as a
 * one-shot would read that environment); two at most. Runs of one shape share a session, so their
 * policy recurs and the service's sandbox prepared ahead is used (kept-sessions.ts). It ends on
 * SIGTERM or SIGHUP as on its idle time, once the command under way has ended. What is not passed:
 * the client's resource limits, cgroup and scheduling priority (the helper's are those of the
 * client that started it).
 *
 * Who it serves: the socket is in a directory of the user's own that no one else can enter, under
 * /run (bin/exec-client.cjs: `$XDG_RUNTIME_DIR`, or /run for root), hidden whole from every Linux
 * sandbox; but a workspace under /run is bound back into it, so only a client that sends the token
 * this process was started with is served. Clients read it in this process's initial environment
 * (/proc/<pid>/environ, the pid in `<key>.pid`); no sandboxed command sees this process (each
 * sandbox has a pid namespace and a /proc of its own), so none can have a command run here with a
 * wider reach than its own. A command starts only on its client's `go` (exec-wire.ts).
 */

/** The argument bin/aalis.cjs is given, in place of `exec`, to run the bundle as the helper: `__exec-helper <socket>`. */
export const EXEC_HELPER_MODE = '__exec-helper';

/** The variable the helper is started with its token in (bin/exec-client.cjs TOKEN_VAR). */
export const EXEC_HELPER_TOKEN = 'AALIS_EXEC_HELPER_TOKEN';

/** How long an accepted client has to say `go` before the helper drops it. */
const GO_WAIT_MS = 30_000;

/** How long a connection has to show the token, and how many may be at it at once (a sandboxed command that reaches the socket gets no further). */
const TOKEN_WAIT_MS = 5_000;
const MAX_PROVING = 16;

/** How long the helper waits for a request before it ends (`AALIS_EXEC_HELPER_IDLE`, seconds). */
export const DEFAULT_HELPER_IDLE_MS = 5 * 60 * 1000;

/** Sandbox services kept at once (a harness alternating two environments keeps both warm). */
const KEPT_SERVICES = 2;

/** What {@link serveExec} takes. */
export interface ExecHelperOptions {
  /** The socket's path; its directory was checked by the client that started the helper and is checked again here. */
  readonly socket: string;
  /** The node and user ids of the client that started it (bin/exec-client.cjs helperWho): requests from any other are declined. */
  readonly who: string;
  /**
   * The token it was started with ({@link EXEC_HELPER_TOKEN} in its environment, where a client that
   * sees this process reads it): requests without it are declined.
   */
  readonly token: string;
  /** How long it waits for a request before it ends ({@link DEFAULT_HELPER_IDLE_MS}). */
  readonly idleMs?: number;
}

/**
 * Whether `dir` is this user's own directory that no one else may enter or write (the socket's
 * home). The client checks the same before it connects (bin/exec-client.cjs, which loads nothing
 * of the bundle); checked again here for a helper started by other means.
 */
function ownPrivateDir(dir: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  return st?.isDirectory() === true && st.uid === process.geteuid?.() && (st.mode & 0o077) === 0;
}

/** Whether `given` is `token`, compared in constant time. */
function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Runs the helper until it is idle for `idleMs`; resolves once it has stopped (its services closed). */
export async function serveExec(options: ExecHelperOptions): Promise<void> {
  const dir = options.socket.slice(0, options.socket.lastIndexOf('/')) || '/';
  if (!ownPrivateDir(dir)) throw new Error(`the helper's directory ${dir} is not this user's own private directory`);
  if (!options.socket.endsWith('.sock')) throw new Error(`the helper's socket ${options.socket} is not named <key>.sock`);
  if (options.token.length < 32) throw new Error('the helper was started without its token');
  const pidFile = `${options.socket.slice(0, -'.sock'.length)}.pid`;
  process.umask(0o077);
  const services = new Map<string, Promise<SandboxService>>();
  // a run's session is the same for the same shape, so its sandbox can be prepared ahead (kept-sessions.ts)
  const keptSessions = new KeptSessions();
  let busy = false;
  // the umask of the request under way (process.umask() without an argument is deprecated: it sets it to read it)
  let umask = 0o077;
  let idle: NodeJS.Timeout | undefined;
  let server: Server;
  // bigint stats: a plain lstat of a socket misleads node's next module resolution (process-io.ts)
  let bound: { dev: bigint; ino: bigint } | undefined;
  let done!: () => void;
  const stopped = new Promise<void>((resolve) => (done = resolve));

  // once: the idle end, a signal and a lost socket may each ask for it
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearTimeout(idle);
    server.close();
    // still ours (another helper may have taken the path): removed, so no client connects to nothing
    try {
      const st = lstatSync(options.socket, { throwIfNoEntry: false, bigint: true });
      if (st && bound && st.dev === bound.dev && st.ino === bound.ino) unlinkSync(options.socket);
    } catch {
      // gone already
    }
    try {
      if (readFileSync(pidFile, 'latin1') === String(process.pid)) unlinkSync(pidFile);
    } catch {
      // gone already, or another helper's now
    }
    await Promise.all([...closing, ...[...services.values()].map((s) => s.then((x) => x.close?.()).catch(() => {}))]);
    keptSessions.dropEmpty();
    done();
  };
  // a signal's end (a logout's SIGTERM) is the idle end: services closed, the empty temps removed;
  // while a command runs, once it has ended (listened for once the socket is bound, below)
  let endWhenFree = false;
  const onEndSignal = () => {
    if (busy) endWhenFree = true;
    else void stop();
  };
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      if (!busy) void stop();
    }, options.idleMs ?? DEFAULT_HELPER_IDLE_MS);
  };

  // the service a run asks for, made as a daemon's (kept-alive launcher, sandboxes prepared ahead)
  const sandboxService = (backend: 'linux' | 'darwin' | 'docker', cacheDir: string): Promise<SandboxService> => {
    // the umask too: the service's launcher, started once, passes its own to every command it starts
    const key = JSON.stringify([backend, cacheDir, umask, Object.entries(process.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
    let service = services.get(key);
    if (service === undefined) {
      service = sandboxOf(backend, { ...process.env }, cacheDir, false, { keptWalks: true });
      service.catch(() => services.delete(key));
    } else services.delete(key); // the most recently used last
    services.set(key, service);
    return service;
  };
  // services past the limit, taken out between requests (none is in use then) and closed while the
  // helper serves the next: a close waits for its launcher to end and its cgroup to go, and the
  // helper was busy meanwhile, so a client coming right after an exit was declined (seen in CI)
  const closing = new Set<Promise<void>>();
  const trimServices = () => {
    while (services.size > KEPT_SERVICES) {
      const [key, service] = services.entries().next().value!;
      services.delete(key);
      const closed = service.then((s) => s.close?.()).catch(() => {});
      closing.add(closed);
      void closed.finally(() => closing.delete(closed));
    }
  };

  const proving = new Set<Socket>();
  const serve = (conn: Socket) => {
    let onFrame: ((frame: ClientFrame) => void) | undefined;
    let gone: (() => void) | undefined;
    // between `accepted` and the client's `go`
    let awaitingGo: (() => void) | undefined;
    let goneBeforeGo: (() => void) | undefined;
    const send = (frame: HelperFrame, then?: () => void) => {
      if (!conn.writable) return;
      conn.write(`${JSON.stringify(frame)}\n`, then);
    };
    // what this connection may send next: its token (a short line, within a few seconds: until
    // then it costs next to nothing), its request, then frames
    let stage: 'token' | 'request' | 'frames' = 'token';
    const limits = { token: TOKEN_LINE_BYTES, request: REQUEST_LINE_BYTES, frames: MAX_LINE_BYTES };
    const unproven = setTimeout(() => conn.destroy(), TOKEN_WAIT_MS);
    const read = lineReader(
      (line) => {
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          conn.destroy();
          return false;
        }
        if (stage === 'token') {
          clearTimeout(unproven);
          proving.delete(conn);
          const t = TokenLineSchema.safeParse(value);
          if (!t.success || !sameToken(t.data.token, options.token)) {
            send({ t: 'declined', why: "not this helper's token" }, () => conn.end());
            return false;
          }
          stage = 'request';
          return true;
        }
        if (stage === 'request') {
          const parsed = ExecRequestSchema.safeParse(value);
          if (!parsed.success) {
            send({ t: 'declined', why: 'the request is not one this helper reads (another version of aalis?)' }, () => conn.end());
            return false;
          }
          stage = 'frames';
          start(parsed.data);
          return true;
        }
        const frame = ClientFrameSchema.safeParse(value);
        if (!frame.success) return true;
        if (frame.data.t === 'go') {
          const go = awaitingGo;
          awaitingGo = goneBeforeGo = undefined;
          go?.();
        } else onFrame?.(frame.data);
        return true;
      },
      () => conn.destroy(),
      () => limits[stage],
    );
    // connections that have not shown the token yet: a few at once, the rest closed at once
    if (proving.size >= MAX_PROVING) {
      clearTimeout(unproven);
      conn.destroy();
      return;
    }
    proving.add(conn);
    conn.on('close', () => {
      clearTimeout(unproven);
      proving.delete(conn);
    });
    // a client ends the connection only by going away (it never half-closes): its end is its hang-up
    let hungUp = false;
    conn.on('data', read);
    conn.on('error', () => {});
    conn.on('end', () => (hungUp = true));
    conn.on('close', () => {
      hungUp = true;
      const before = goneBeforeGo;
      awaitingGo = goneBeforeGo = undefined;
      if (before) before();
      else gone?.();
    });

    const start = (req: ExecRequest) => {
      if (req.who !== options.who) {
        send({ t: 'declined', why: 'started for another build, node, user ids or namespaces' }, () => conn.end());
        return;
      }
      if (busy) {
        send({ t: 'declined', why: 'busy with another command' }, () => conn.end());
        return;
      }
      try {
        process.chdir(req.cwd);
      } catch (e) {
        send({ t: 'declined', why: `its directory cannot be entered here (${(e as NodeJS.ErrnoException).code})` }, () => conn.end());
        return;
      }
      try {
        adoptEnv(req.env);
      } catch (e) {
        send({ t: 'declined', why: `its environment cannot be taken here (${(e as Error).message})` }, () => conn.end());
        return;
      }
      busy = true;
      clearTimeout(idle);
      umask = req.umask;
      process.umask(umask);
      const io = clientIo(req, send, (f) => (onFrame = f), (g) => (gone = g));
      const release = () => {
        process.umask(0o077);
        trimServices();
        busy = false;
        if (endWhenFree) void stop();
        else armIdle();
      };
      // Started on the client's `go` only, which it sends only if `accepted` came before it gave up
      // waiting: a command runs here or in the client, never both. A client gone (or silent) before
      // its `go` gets nothing run for it, and the helper is free again.
      if (hungUp || !conn.writable) return void release();
      const waiting = setTimeout(() => conn.destroy(), GO_WAIT_MS);
      awaitingGo = () => {
        clearTimeout(waiting);
        void runGuarded('exec', (argv, cli) => execCommand(argv, cli, { sandboxService, keptSessions }), req.argv, io)
          .then((status) => send({ t: 'exit', status }, () => conn.end()))
          .finally(release);
      };
      goneBeforeGo = () => {
        clearTimeout(waiting);
        release();
      };
      send({ t: 'accepted', pid: process.pid });
    };
  };

  server = createServer(serve);
  await listenOnce(server, options.socket);
  server.on('error', () => {}); // an accept that failed (out of descriptors): that connection is lost, the helper goes on
  const st = lstatSync(options.socket, { bigint: true });
  bound = { dev: st.dev, ino: st.ino };
  // where a client finds this process, to read its token: written whole (a temp renamed over), after the socket answers
  const temp = `${pidFile}.${process.pid}`;
  writeFileSync(temp, String(process.pid), { mode: 0o600, flag: 'wx' });
  renameSync(temp, pidFile);
  // a helper whose socket was removed or taken by another is reached by no client: it ends
  const watch = setInterval(() => {
    const now = lstatSync(options.socket, { throwIfNoEntry: false, bigint: true });
    if (!busy && (now === undefined || now.dev !== bound!.dev || now.ino !== bound!.ino)) {
      clearInterval(watch);
      void stop();
    }
  }, 5000);
  watch.unref();
  process.on('SIGTERM', onEndSignal);
  process.on('SIGHUP', onEndSignal);
  armIdle();
  await stopped;
  clearInterval(watch);
}

/**
 * Listens at `path`; a socket file there that no helper answers on (one that died) is removed first.
 * Throws when a live helper answers there: this one is not needed.
 */
async function listenOnce(server: Server, path: string): Promise<void> {
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    const alive = await new Promise<boolean>((resolve) => {
      const probe = createConnection(path, () => {
        probe.destroy();
        resolve(true);
      });
      probe.on('error', () => resolve(false));
    });
    if (alive) throw new Error(`another helper answers at ${path}`);
    unlinkSync(path);
    await listen();
  }
}

/** The client's environment in place of this process's (process.env itself, so children and lookups see it). */
function adoptEnv(env: Readonly<Record<string, string>>): void {
  for (const key of Object.keys(process.env)) if (!Object.hasOwn(env, key)) delete process.env[key];
  Object.assign(process.env, env);
}

/** The client's terminal as exec's {@link CliIo}: output, questions and standard input through the connection. */
function clientIo(req: ExecRequest, send: (frame: HelperFrame) => void, onFrame: (f: (frame: ClientFrame) => void) => void, onGone: (g: () => void) => void): CliIo {
  const asks = new Map<number, (answer: string | undefined) => void>();
  const stdin: ((data: string) => void)[] = [];
  const interrupts = new Set<(signal: NodeJS.Signals) => void>();
  let ids = 0;
  let ended = false;
  // a signal before exec listens (while its runtime starts) is held for it: the command is then
  // aborted before it starts, as the client's own process would have died before starting it
  let held: NodeJS.Signals | undefined;
  const interrupt = (signal: NodeJS.Signals) => {
    held ??= signal;
    for (const h of interrupts) h(signal);
  };
  onFrame((frame) => {
    if (frame.t === 'signal') interrupt(frame.signal);
    else if (frame.t === 'stdin') stdin.shift()?.(frame.data);
    else if (frame.t === 'answer') {
      asks.get(frame.id)?.(frame.answer ?? undefined);
      asks.delete(frame.id);
    }
  });
  // a client gone (killed, or its second signal): its command is aborted as on a hang-up, and nothing waits for it
  onGone(() => {
    ended = true;
    interrupt('SIGHUP');
    for (const a of asks.values()) a(undefined);
    asks.clear();
    for (const s of stdin.splice(0)) s('');
  });
  return {
    stdout: (data) => send({ t: 'out', data }),
    stderr: (data) => send({ t: 'err', data }),
    ...(req.interactive
      ? {
          ask: (question: string) =>
            ended
              ? Promise.resolve(undefined)
              : new Promise<string | undefined>((resolve) => {
                  const id = ++ids;
                  asks.set(id, resolve);
                  send({ t: 'ask', id, question });
                }),
        }
      : {}),
    readStdin: () =>
      ended
        ? Promise.resolve('')
        : new Promise<string>((resolve) => {
            stdin.push(resolve);
            send({ t: 'stdin' });
          }),
    onInterrupt: (handler) => {
      interrupts.add(handler);
      if (held !== undefined) queueMicrotask(() => handler(held!));
      return () => interrupts.delete(handler);
    },
  };
}

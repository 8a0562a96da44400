import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, constants, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { z } from 'zod';
import { LAUNCH_ENV } from './launch-env.js';
import { LAUNCHER_PY } from './launcher.helper.js';
import type { IdRange } from './root-map.js';

/*
 * A root daemon's runs start from one kept-alive python process (launcher.helper.ts) instead of a
 * fork of the daemon and a python start each: node's spawn is a real fork() whose synchronous cost
 * grows with the daemon's memory, and python's start was the largest single cost of the chain.
 * Node can neither make pipes nor pass fds, so a run's stdio are FIFOs the launcher makes in the
 * run's own folder (0700, the daemon's temp): the daemon opens its ends non-blocking as sockets,
 * the launcher's child opens the others before it execs. The setup sync fd (network.ts) is a FIFO
 * whose only writer is the daemon, so releasing the sandbox stays a close in the daemon, as before.
 */

/** How a launched run ended: its exit, the signal that killed it, or the launcher lost mid-run (nothing of the run can be trusted then). */
export type LauncherExit =
  | { readonly kind: 'exit'; readonly code: number }
  | { readonly kind: 'signal'; readonly signal: NodeJS.Signals }
  | { readonly kind: 'lost'; readonly reason: string };

/** What a run is started with: the plan's argv and env, the small data fds' bytes, whether it reads stdin. */
export interface LauncherStart {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** argv is the root map's one-shot step: the child runs the same python function on its operands instead of a new interpreter. */
  readonly rootMap: boolean;
  /** argv is an ordinary user's overlay step (`USER_STEP_PY`'s operands, then bwrap): the child runs `user_step` on them. */
  readonly userStep?: boolean;
  /** fd number -> bytes, each a memfd in the child (seccomp, args, env). */
  readonly fds: Readonly<Record<number, Uint8Array>>;
  readonly stdin: boolean;
  /** A sandbox prepared ahead (prepared.ts): it keeps no process alive until {@link LaunchedRun.claim}. */
  readonly background?: boolean;
  /**
   * Not a program: the launcher's child applies this nft script in the network namespace of `pid`
   * with libnftables (`library`), the launcher's `nft` op (launcher.helper.ts); argv, env and fds
   * are unused then. Its exit is 0 only with the whole script in place.
   */
  readonly filter?: { readonly pid: number; readonly rules: string; readonly library: string };
}

/** One run started by the launcher. */
export interface LaunchedRun {
  /** bwrap's pid (the launcher's child); undefined when the launcher was lost before it said. */
  readonly pid: number | undefined;
  readonly stdin?: Socket;
  readonly stdout: Socket;
  readonly stderr: Socket;
  readonly info: Socket;
  /** Closes the setup sync FIFO: the sandbox goes on to run the command. */
  release(): void;
  /** SIGKILL to bwrap, by the launcher, only while it has not reaped it. */
  kill(): void;
  /** Settles once the launcher reaped bwrap, or lost it. */
  readonly exit: Promise<LauncherExit>;
  /** Closes whatever the daemon still holds of the run's FIFOs. */
  dispose(): void;
  /** A background run (prepared ahead) becomes an ordinary one: it keeps the process alive from now on. */
  claim(): void;
}

const Reply = z.union([
  z.object({ ready: z.number() }),
  z.object({ id: z.number(), prepared: z.literal(true) }),
  z.object({ id: z.number(), pid: z.number() }),
  z.object({ id: z.number(), exit: z.number() }),
  z.object({ id: z.number(), signal: z.number() }),
  z.object({ id: z.number(), error: z.string() }),
]);
type Reply = z.infer<typeof Reply>;

/** How long the launcher may take to say it is ready. */
const READY_MS = 15_000;

/**
 * How long the launcher may take to answer one step of a run (its FIFOs made, its child forked).
 * Each is a few syscalls in a process that does nothing else; a launcher silent longer is stopped
 * (SIGSTOP) or wedged, and is treated as lost: killed, and a new one starts for the next run.
 */
export const LAUNCHER_REPLY_MS = 10_000;

/** How long a closing launcher has to end after its channel closed before it is killed. */
const LAUNCHER_END_MS = 2000;

const SIGNAL_NAMES = new Map(Object.entries(osConstants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

const unavailable = (reason: string) => new SandboxUnavailableError('linux', `the launcher: ${reason}`, 'run it again (a new launcher starts); see `aalis doctor` (host-uid); nothing was run');

/** The FIFOs the launcher makes in a run's folder (launcher.helper.ts `NAMES`). */
const FIFO_NAMES = ['in', 'out', 'err', 'info', 'sync'] as const;

/** Errors of a launcher lost before the run's start was sent: nothing of the run ran. */
const lostBeforeStart = new WeakSet<Error>();

/** The running launcher process and its replies by run id. */
interface Live {
  readonly proc: ChildProcess;
  readonly ready: Promise<void>;
  readonly handlers: Map<number, (r: Reply | { lost: string }) => void>;
  /** Marks it lost (killed; every waiting run told): a launcher silent past {@link LAUNCHER_REPLY_MS}. */
  readonly lose: (reason: string) => void;
  dead?: string;
  /** The range whose view it was asked to make ahead ({@link Launcher.warm}). */
  view?: string;
}

/** The per-service launcher: started at the first run, again after it died; see the file's note. */
export class Launcher {
  private live?: Live;
  /** Set by {@link close}: no process starts again (a run reaching it then fails closed, nothing run). */
  private closed = false;
  private nextId = 0;
  /** Runs prepared ahead and not yet claimed: they do not keep the process alive. */
  private readonly background = new Set<number>();
  /** Runs whose FIFOs were asked for before their start was known ({@link begin}), by FIFO folder. */
  private readonly early = new Map<string, { readonly give: (start: LauncherStart) => void; readonly refuse: (e: Error) => void; readonly run: Promise<LaunchedRun> }>();
  private stderrTail = '';

  /**
   * `python`: the interpreter `findPython` chose; `replyMs`: the bound on each answer (tests
   * shorten it); `onStart`: told each launcher's pid as it is spawned (the service moves it into
   * its sandboxes' CPU cgroup, cpu-share.ts, so its work and its runs' set-up weigh with the
   * sandboxes, not with the daemon's thread).
   */
  constructor(
    private readonly python: string,
    private readonly replyMs = LAUNCHER_REPLY_MS,
    private readonly onStart: (pid: number) => void = () => {},
  ) {}

  /** The launcher's pid while one runs (tests). */
  get pid(): number | undefined {
    return this.live && !this.live.dead ? this.live.proc.pid : undefined;
  }

  /**
   * Starts the launcher now if none runs, so its python start overlaps the run's scan; with the
   * root map's `range`, it also makes its idmapped view for that range now (launcher.helper.ts),
   * not at the run's start.
   */
  warm(range?: IdRange): void {
    if (this.closed) return;
    const live = this.ensure();
    const key = range && `${range.base}:${range.count}`;
    if (range && live.view !== key) {
      live.view = key;
      this.send(live, { op: 'view', id: 0, argv: [String(range.base), String(range.count)] });
    }
  }

  private ensure(): Live {
    // a run reaching a closed launcher would have started a process nobody ends (found by a review:
    // it kept the service's CPU cgroup busy, so close() waited 5 s and left the cgroup behind)
    if (this.closed) throw new SandboxUnavailableError('linux', 'the sandbox service is closing: no new command starts', 'run it again once the daemon is up; nothing was run');
    if (this.live && !this.live.dead) return this.live;
    this.stderrTail = '';
    const proc = spawn(this.python, ['-I', '-S', '-c', LAUNCHER_PY, String(process.pid)], { env: { ...LAUNCH_ENV }, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
    if (proc.pid !== undefined) this.onStart(proc.pid);
    const handlers = new Map<number, (r: Reply | { lost: string }) => void>();
    let onReady!: () => void;
    let onFail!: (e: Error) => void;
    const ready = new Promise<void>((res, rej) => {
      onReady = res;
      onFail = rej;
    });
    ready.catch(() => {});
    const timer = setTimeout(() => lose(`it did not start within ${READY_MS} ms`), READY_MS);
    timer.unref();
    const lose = (reason: string): void => {
      if (live.dead) return;
      live.dead = `${reason}${this.stderrTail ? `: ${this.stderrTail.trim()}` : ''}`;
      clearTimeout(timer);
      onFail(unavailable(live.dead));
      proc.kill('SIGKILL');
      for (const h of [...handlers.values()]) h({ lost: live.dead });
      handlers.clear();
    };
    const live: Live = { proc, ready, handlers, lose };
    proc.on('error', (e) => lose(`it could not be started (${e.message})`));
    proc.on('exit', (code, signal) => lose(`it ended (${signal ?? `exit ${code}`})`));
    proc.stdin!.on('error', () => {}); // a dead launcher: its exit says so
    proc.stderr!.on('data', (d: Buffer) => {
      this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
    });
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch {
          return lose(`it said something unexpected: ${line.slice(0, 200)}`);
        }
        const parsed = Reply.safeParse(json);
        if (!parsed.success) return lose(`it said something unexpected: ${line.slice(0, 200)}`);
        const r = parsed.data;
        if ('ready' in r) {
          clearTimeout(timer);
          onReady();
        } else handlers.get(r.id)?.(r);
      }
    });
    proc.stdout!.on('close', () => lose('its channel closed'));
    this.live = live;
    this.idle();
    return live;
  }

  /** While no run waits on it, the launcher keeps no process alive (`aalis exec` ends when its run does). */
  private idle(): void {
    const live = this.live;
    if (!live || live.dead) return;
    let waiting = 0;
    for (const id of live.handlers.keys()) if (!this.background.has(id)) waiting++;
    const busy = waiting > 0;
    for (const h of [live.proc, live.proc.stdin, live.proc.stdout, live.proc.stderr] as { ref(): void; unref(): void }[]) {
      if (busy) h.ref();
      else h.unref();
    }
  }

  private send(live: Live, msg: object): void {
    if (!live.dead) live.proc.stdin!.write(`${JSON.stringify(msg)}\n`);
  }

  /**
   * Starts one run whose FIFOs go in `dir` (the run's own folder, which must exist). Throws
   * {@link SandboxUnavailableError} when the launcher cannot start or is lost before the run started.
   */
  async launch(dir: string, start: LauncherStart): Promise<LaunchedRun> {
    if (start.background) this.abandon(dir); // begun as a run of its own: not one prepared ahead
    const early = this.early.get(dir);
    this.early.delete(dir);
    try {
      if (!early) return await this.launchOnce(dir, Promise.resolve(start), start.background === true);
      early.give(start);
      return await early.run;
    } catch (e) {
      // a launcher lost before this run's start was sent ran nothing of it: killed, or dead with its
      // exit not yet seen when the run began (ensure() still took it for alive). One fresh launcher
      // is tried, in a folder cleared of the FIFOs the lost one may have made, before failing closed.
      if (!lostBeforeStart.has(e as Error)) throw e;
      for (const name of FIFO_NAMES) rmSync(join(dir, name), { force: true });
      return await this.launchOnce(dir, Promise.resolve(start), start.background === true);
    }
  }

  /**
   * Has the launcher make the FIFOs in `dir` (which must exist) now, while the run's scan goes on,
   * so its {@link launch} with `dir` only starts it: one round trip to the launcher off the run's
   * path. A run that will not launch after all calls {@link abandon}.
   */
  begin(dir: string): void {
    if (this.early.has(dir)) return;
    let give!: (start: LauncherStart) => void;
    let refuse!: (e: Error) => void;
    const start = new Promise<LauncherStart>((res, rej) => {
      give = res;
      refuse = rej;
    });
    // refused (abandon) before launchOnce awaits it, or when it never will (its launcher lost first): not unhandled
    start.catch(() => {});
    const run = this.launchOnce(dir, start, false);
    run.catch(() => {}); // its error is the run's when it launches; unused, it is dropped (abandon)
    this.early.set(dir, { give, refuse, run });
  }

  /** The run {@link begin} was called for will not launch: its FIFOs' ends are closed in the launcher. No-op once launched. */
  abandon(dir: string): void {
    const early = this.early.get(dir);
    if (!early) return;
    this.early.delete(dir);
    early.refuse(new Error('the run did not launch'));
  }

  /** One launch: the FIFOs asked for now, the start sent once `later` gives it (at once, or when a begun run's plan is ready). */
  private async launchOnce(dir: string, later: Promise<LauncherStart>, background: boolean): Promise<LaunchedRun> {
    const live = this.ensure();
    const id = ++this.nextId;
    if (background) this.background.add(id);
    let exitWith!: (e: LauncherExit) => void;
    const exit = new Promise<LauncherExit>((res) => {
      exitWith = res;
    });
    let step: ((r: Reply | { lost: string }) => void) | undefined;
    // every answer is awaited within the bound: a launcher alive but silent (stopped, wedged) is lost,
    // which answers this run (and every other waiting on it) with `lost` and kills it
    const next = (what: string) =>
      new Promise<Reply | { lost: string }>((res) => {
        const bound = setTimeout(() => live.lose(`it did not answer within ${this.replyMs} ms (${what})`), this.replyMs);
        step = (r) => {
          clearTimeout(bound);
          res(r);
        };
      });
    live.handlers.set(id, (r) => {
      if ('lost' in r) exitWith({ kind: 'lost', reason: r.lost });
      else if ('exit' in r) exitWith({ kind: 'exit', code: r.exit });
      else if ('signal' in r) exitWith({ kind: 'signal', signal: SIGNAL_NAMES.get(r.signal) ?? 'SIGKILL' });
      if ('lost' in r || 'exit' in r || 'signal' in r) {
        live.handlers.delete(id);
        this.background.delete(id);
        this.idle();
      }
      step?.(r);
    });
    this.idle();
    const fail = (reason: string): never => {
      live.handlers.delete(id);
      this.background.delete(id);
      this.idle();
      throw unavailable(reason);
    };
    // registered above, so the launcher's pipes keep the process alive while it starts
    try {
      await live.ready;
    } catch (e) {
      live.handlers.delete(id);
      this.background.delete(id);
      this.idle();
      lostBeforeStart.add(e as Error);
      throw e;
    }
    let answer = next("making the run's FIFOs");
    this.send(live, { op: 'prepare', id, dir });
    let r = await answer;
    if ('lost' in r) {
      live.handlers.delete(id);
      this.background.delete(id);
      this.idle();
      const e = unavailable(r.lost);
      lostBeforeStart.add(e);
      throw e;
    }
    if ('error' in r) return fail(`the run's FIFOs could not be made: ${r.error}`);
    let start: LauncherStart;
    try {
      start = await later;
    } catch (e) {
      this.send(live, { op: 'drop', id }); // abandoned: the ends the launcher opened are closed
      live.handlers.delete(id);
      this.idle();
      throw e;
    }
    if (live.dead) {
      // lost while the run was still being planned: nothing of it was started, so it may be tried again
      live.handlers.delete(id);
      this.idle();
      const e = unavailable(live.dead);
      lostBeforeStart.add(e);
      throw e;
    }
    const fds: number[] = [];
    const open = (name: string, flags: number) => {
      const fd = openSync(join(dir, name), flags | constants.O_NONBLOCK | constants.O_NOFOLLOW); // libuv adds O_CLOEXEC
      fds.push(fd);
      return fd;
    };
    let ends: { out: number; err: number; info: number; sync: number; in?: number };
    try {
      ends = { out: open('out', constants.O_RDONLY), err: open('err', constants.O_RDONLY), info: open('info', constants.O_RDONLY), sync: open('sync', constants.O_WRONLY), ...(start.stdin ? { in: open('in', constants.O_WRONLY) } : {}) };
    } catch (e) {
      for (const fd of fds) closeSync(fd);
      this.send(live, { op: 'drop', id });
      return fail(`the run's FIFOs could not be opened: ${(e as Error).message}`);
    }
    answer = next('starting the run');
    if (start.filter) this.send(live, { op: 'nft', id, pid: start.filter.pid, rules: start.filter.rules, library: start.filter.library });
    else
      this.send(live, {
        op: 'start',
      id,
      argv: start.argv,
      env: start.env,
      rootMap: start.rootMap,
      ...(start.userStep ? { userStep: true } : {}),
      stdin: start.stdin,
      fds: Object.fromEntries(Object.entries(start.fds).map(([n, b]) => [n, Buffer.from(b).toString('base64')])),
    });
    r = await answer;
    if (!('pid' in r || 'lost' in r)) {
      // the launcher could not fork: nothing started, so the FIFOs may close
      for (const fd of fds) closeSync(fd);
      return fail('error' in r ? r.error : 'it did not start the run');
    }
    step = undefined;
    // lost after the start was asked: a child may exist, and its sandbox wait on the sync FIFO; the
    // caller's launch state (launch-state.ts) finds its pid on the info FIFO and kills it before that FIFO closes
    const pid = 'pid' in r ? r.pid : undefined;
    const socket = (fd: number, readable: boolean) => {
      const s = new Socket({ fd, readable, writable: !readable });
      s.on('error', () => {}); // a reader gone early (EPIPE) or a read error: the run's exit says what happened
      if (start.background) s.unref();
      return s;
    };
    const stdout = socket(ends.out, true);
    const stderr = socket(ends.err, true);
    const info = socket(ends.info, true);
    const stdin = ends.in === undefined ? undefined : socket(ends.in, false);
    let sync: number | undefined = ends.sync;
    const closeSync_ = () => {
      if (sync === undefined) return;
      closeSync(sync);
      sync = undefined;
    };
    return {
      pid,
      ...(stdin ? { stdin } : {}),
      stdout,
      stderr,
      info,
      release: closeSync_,
      kill: () => this.send(live, { op: 'kill', id }),
      exit,
      dispose: () => {
        closeSync_();
        for (const s of [stdout, stderr, info, stdin]) s?.destroy();
      },
      claim: () => {
        if (!this.background.delete(id)) return;
        for (const s of [stdout, stderr, info, stdin]) s?.ref();
        this.idle();
      },
    };
  }

  /**
   * Ends the launcher for good (the service is closing); its runs go with it, and a run after it
   * fails closed. Resolves once its process is
   * gone (the CPU cgroup it sits in can be removed only then), killed if it has not ended within
   * 2 s (one stopped or wedged).
   */
  close(): Promise<void> {
    this.closed = true;
    const live = this.live;
    this.live = undefined;
    if (!live || live.proc.pid === undefined || live.proc.exitCode !== null || live.proc.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => live.proc.kill('SIGKILL'), LAUNCHER_END_MS);
      live.proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      if (!live.dead) live.proc.stdin!.end();
    });
  }
}

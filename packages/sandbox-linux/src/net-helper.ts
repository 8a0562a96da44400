import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { loadExeca } from './execa-lazy.js';
import type { LaunchedRun, Launcher } from './launcher.js';

/*
 * Network `on` starts host-side helpers per run: slirp4netns, and nsenter + nft for the localPorts
 * filter. Started by a fork of the daemon (execa), each costs a synchronous fork() on the event
 * loop that grows with the daemon's memory (a daemon holding a large host model: tens of ms), and
 * with localPorts there are two of them back to back. Where the run itself is started by the
 * kept-alive launcher (a root daemon: launcher.ts), the helpers are started by it too, as the run's
 * bwrap is: the launcher's small python forks and the daemon does not. Either way a helper gets the
 * same fds: stdin (the nft script, or nothing), stderr, fd 4 that the daemon reads (slirp4netns's
 * `--ready-fd`) and fd 5 whose only writer is the daemon (slirp4netns's `--exit-fd`).
 */

/** The helper's fd the daemon reads: slirp4netns writes `1` there once its device is configured. */
export const HELPER_READY_FD = 4;
/** The helper's fd whose writer the daemon holds: slirp4netns exits once it is closed. */
export const HELPER_EXIT_FD = 5;

/** How a helper ended; `lost`: the launcher died first (nothing of the helper can be trusted). */
export interface HelperEnd {
  readonly exitCode?: number;
  readonly signal?: string;
  readonly lost?: string;
}

/** One running helper process of a run. */
export interface NetHelper {
  /** Its fd {@link HELPER_READY_FD}. */
  readonly ready: Readable;
  readonly stderr: Readable;
  /** Closes the daemon's end of its fd {@link HELPER_EXIT_FD}. */
  closeExit(): void;
  /** SIGKILL (through the launcher, only while it has not reaped the helper). */
  kill(): void;
  /** Settles once the helper is reaped and its stderr read to the end; never rejects. */
  readonly ended: Promise<HelperEnd>;
}

/** Starts one helper: an absolute argv, the empty environment, cwd `/`, `input` on its stdin. */
export type StartNetHelper = (name: string, argv: readonly [string, ...string[]], input?: string) => Promise<NetHelper>;

/** Helpers started by a fork of the daemon (execa): an ordinary user's daemon, or the launcher off. */
export const forkNetHelper: StartNetHelper = async (_name, [file, ...args], input) => {
  const stdio = [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe', 'ignore', 'pipe', 'pipe'] as const;
  const execa = await loadExeca();
  const proc = execa(file, args, { env: {}, extendEnv: false, cwd: '/', reject: false, buffer: false, stdio });
  const fds = proc.stdio as unknown as (Readable & Writable)[];
  fds[HELPER_EXIT_FD]!.on('error', () => {}); // the helper gone first: its end says so
  if (input !== undefined) {
    fds[0]!.on('error', () => {});
    fds[0]!.end(input);
  }
  return {
    ready: fds[HELPER_READY_FD]!,
    stderr: fds[2]!,
    closeExit: () => fds[HELPER_EXIT_FD]!.end(),
    kill: () => proc.kill('SIGKILL'),
    ended: proc.then(
      (r) => ({ ...(r.exitCode === undefined ? {} : { exitCode: r.exitCode }), ...(r.signal ? { signal: r.signal } : {}) }),
      (e: Error) => ({ lost: e.message }),
    ),
  };
};

/**
 * Helpers started by the run's launcher, their FIFOs in `<fifoDir>/<name>` (0700, inside the run's
 * FIFO folder, removed with it). Rejects (nothing started) when the launcher cannot start it.
 */
export function launcherNetHelper(launcher: Launcher, fifoDir: string): StartNetHelper {
  return async (name, [file, ...args], input) => {
    const run = await launcher.launch(helperDir(fifoDir, name), { argv: [resolve(file), ...args], env: {}, rootMap: false, fds: {}, stdin: input !== undefined });
    if (input !== undefined) run.stdin?.end(input);
    return launchedHelper(run);
  };
}

/**
 * Applies an nft script in the network namespace of the sandbox whose pid 1 is `pid`, with no nft
 * process: the launcher's child does it with libnftables (the launcher's `nft` op). Ends as a
 * helper does: exit 0 only with the whole script in place, nft's message on its stderr.
 */
export type ApplyFilter = (pid: number, rules: string) => Promise<NetHelper>;

/** {@link ApplyFilter} by the run's launcher, its FIFOs in `<fifoDir>/nft`; `library`: the libnftables it loads. */
export function launcherFilter(launcher: Launcher, fifoDir: string, library: string): ApplyFilter {
  return async (pid, rules) => launchedHelper(await launcher.launch(helperDir(fifoDir, 'nft'), { argv: [], env: {}, rootMap: false, fds: {}, stdin: false, filter: { pid, rules, library } }));
}

/** A helper's own FIFO folder inside the run's FIFO folder. */
function helperDir(fifoDir: string, name: string): string {
  const dir = join(fifoDir, name);
  // recursive: whichever way the run's own FIFOs were made, the folder is the run's (0700 inside the daemon's 0700 temp)
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** A helper the launcher started, as a {@link NetHelper}. */
function launchedHelper(run: LaunchedRun): NetHelper {
  run.stdout.resume(); // slirp4netns says what it did on stdout: read and dropped, so it never blocks
  const drained = new Promise<void>((res) => (run.stderr.readableEnded || run.stderr.destroyed ? res() : run.stderr.once('close', () => res())));
  const ended = run.exit.then(async (e): Promise<HelperEnd> => {
    if (e.kind === 'lost') {
      run.dispose();
      return { lost: e.reason };
    }
    await drained;
    run.dispose();
    return e.kind === 'exit' ? { exitCode: e.code } : { signal: e.signal };
  });
  return { ready: run.info, stderr: run.stderr, closeExit: () => run.release(), kill: () => run.kill(), ended };
}

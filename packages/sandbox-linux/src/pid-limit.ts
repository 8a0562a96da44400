import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';
import { loadExeca } from './execa-lazy.js';
import { findSystemTool } from './loopback-filter.js';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/**
 * How many tasks (processes and threads: the kernel counts both) one sandbox may have. A fork
 * bomb stops there with EAGAIN. Threads count, so the default leaves room for a parallel build on
 * a big machine (`cargo build -j64`: each rustc up to ~18 threads, ~1,200 tasks; a `pnpm install`
 * or a test runner's node workers ~11 threads each) and stays far below any `pid_max` (32,768 at
 * the least, 4,194,304 on systemd machines), so the host keeps its pids.
 */
export const DEFAULT_PID_LIMIT = 4096;

/**
 * How the limit is enforced. `rlimit`: RLIMIT_NPROC set on the sandbox's first process from the
 * host while it waits at the start of its setup. Since Linux 5.14 the kernel counts it per user
 * namespace (ucounts), so only the sandbox's own tasks count, not the daemon user's others
 * (tested). The kernel never enforces RLIMIT_NPROC for the host's uid 0 (measured: 200 forks
 * went through a limit of 50), so a root daemon uses `cgroup`: a pids cgroup per run
 * (`pids.max`), the sandbox moved into it while it waits. `none`: `pidLimit: 0`, asked for.
 */
export type PidLimitMechanism =
  | { readonly kind: 'rlimit'; readonly prlimit: string }
  | { readonly kind: 'cgroup'; readonly base: string }
  | { readonly kind: 'none' };

/** No way to apply the limit here: the run fails closed; `fix` says what the user can do. */
export class PidLimitError extends AalisError<LinuxErrorCode> {
  override readonly name = 'PidLimitError';
  declare readonly fix: string;
  constructor(message: string, fix: string) {
    super('pid-limit', message, { fix });
  }
}

const FIX =
  'run the daemon as an ordinary user (RLIMIT_NPROC then limits the sandbox), or give it a writable cgroup with the pids controller, or set the sandbox option pidLimit to 0 to run without a limit';

/** The directory under which this process makes its per-run pids cgroups, or why there is none. */
export function findPidsCgroup(mountinfo = safeRead('/proc/self/mountinfo'), own = safeRead('/proc/self/cgroup')): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const [fstype, , superOpts = ''] = after.split(' ');
    const mountPoint = before.split(' ')[4];
    if (!mountPoint) continue;
    if (fstype === 'cgroup' && superOpts.split(',').includes('pids')) {
      // v1: under this process's own cgroup in the pids hierarchy
      const mine = own.split('\n').find((l) => l.split(':')[1]?.split(',').includes('pids'));
      const path = mine?.split(':').slice(2).join(':') ?? '/';
      return join(mountPoint, path, 'aalis');
    }
    if (fstype === 'cgroup2' && safeRead(join(mountPoint, 'cgroup.controllers')).split(/\s+/).includes('pids')) {
      // v2: a cgroup of our own beside the service's (no process may sit in a cgroup whose children get controllers)
      return join(mountPoint, 'aalis');
    }
  }
  return undefined;
}

function safeRead(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Chooses the mechanism for `limit` on this machine as this user, and checks it can work (a
 * cgroup base that can be made and written). Throws {@link PidLimitError} where none can.
 */
export function choosePidLimit(limit: number, uid = process.geteuid?.() ?? 0): PidLimitMechanism {
  if (limit === 0) return { kind: 'none' };
  if (uid !== 0) {
    const prlimit = findSystemTool('prlimit');
    if (!prlimit) throw new PidLimitError('prlimit (util-linux) is missing: the sandbox pid limit cannot be set', 'sudo apt-get install -y util-linux');
    return { kind: 'rlimit', prlimit };
  }
  const base = findPidsCgroup();
  if (!base) throw new PidLimitError('the daemon runs as root, for which the kernel does not enforce RLIMIT_NPROC, and no cgroup pids controller is mounted', FIX);
  try {
    mkdirSync(base, { recursive: true, mode: 0o755 });
    const v2 = existsSync(join(base, 'cgroup.subtree_control'));
    if (v2 && !safeRead(join(base, 'cgroup.subtree_control')).split(/\s+/).includes('pids')) writeFileSync(join(base, 'cgroup.subtree_control'), '+pids');
  } catch (e) {
    throw new PidLimitError(`the pids cgroup ${base} cannot be used: ${(e as Error).message}`, FIX);
  }
  return { kind: 'cgroup', base };
}

/** The limit for one run: {@link enter} once the sandbox's first process exists, {@link release} after the run. */
export interface RunPidLimit {
  /**
   * Starts moving bwrap itself (`pid`) into the run's cgroup as soon as it is spawned, so the
   * sandbox it forks is born there: a move waits for an RCU grace period (~20 ms under load
   * here), which then overlaps bwrap's start instead of delaying the command. Optional: `enter`
   * checks and moves the sandbox itself when bwrap forked it first.
   */
  adopt(pid: number): void;
  /** Applies the limit to the sandbox whose first process is `pid`, before it runs anything (it waits at the start of its setup). */
  enter(pid: number): Promise<void>;
  /**
   * Sets the limit again on a sandbox that entered it earlier (one prepared ahead, at its release):
   * a change made on the host meanwhile is not inherited. Rejects where it cannot be set.
   */
  reassert(pid: number): Promise<void>;
  release(): Promise<void>;
  /** The run's cgroup (a root daemon's): what remains of a sandbox that does not end is killed through it (bounded-end.ts). */
  readonly cgroup?: string;
}

/**
 * Gets the limit of one run ready. The run's cgroup is taken from this process's pool of idle
 * ones (see {@link takeRunCgroup}) or made, and given its `pids.max`, off the daemon's thread while
 * bwrap starts; moving the sandbox into it is what {@link RunPidLimit.enter} leaves for when its
 * pid is known. Rejects (and leaves nothing in use) where the limit cannot be set; the caller then
 * runs nothing. `name` names a cgroup made for this run.
 */
export async function preparePidLimit(m: PidLimitMechanism, limit: number, name: string): Promise<RunPidLimit> {
  if (m.kind === 'none') return { adopt: () => {}, enter: async () => {}, reassert: async () => {}, release: async () => {} };
  if (m.kind === 'rlimit') {
    const enter = async (pid: number) => {
      const execa = await loadExeca();
      const r = await execa(m.prlimit, ['--pid', String(pid), `--nproc=${limit}:${limit}`], { reject: false, env: {}, extendEnv: false, timeout: 5000 });
      if (r.exitCode !== 0 && /No such process/.test(String(r.stderr))) return; // gone already, as below
      if (r.exitCode !== 0) throw new PidLimitError(`prlimit could not limit the sandbox's processes: ${String(r.stderr).trim()}`, FIX);
    };
    return {
      adopt: () => {}, // RLIMIT_NPROC set on bwrap would count in the daemon's user namespace: set on the sandbox only
      enter,
      reassert: enter,
      release: async () => {},
    };
  }
  const dir = await takeRunCgroup(m.base, limit, name);
  const procs = join(dir, 'cgroup.procs');
  let adopted: Promise<unknown> = Promise.resolve();
  return {
    cgroup: dir,
    adopt: (pid) => {
      adopted = writeFile(procs, String(pid)).catch(() => {}); // enter() checks what it achieved
    },
    enter: async (pid) => {
      await adopted;
      try {
        // read at once (the kernel's list, no disk; unlike a move, a read waits for no RCU grace
        // period): through the thread pool its open, stat, reads and close were four hops while the
        // sandbox waits to be released, ~25 ms under load
        if (readFileSync(procs, 'utf8').split('\n').includes(String(pid))) return; // born inside
        await writeFile(procs, String(pid));
      } catch (e) {
        // gone already: bwrap's setup failed on its own, and its stderr says why; nothing ran
        if ((e as NodeJS.ErrnoException).code === 'ESRCH') return;
        throw new PidLimitError(`the sandbox could not be put in its pids cgroup ${dir}: ${(e as Error).message}`, FIX);
      }
    },
    reassert: async () => {
      try {
        await writeFile(join(dir, 'pids.max'), String(limit));
      } catch (e) {
        throw new PidLimitError(`the limit of the sandbox's pids cgroup ${dir} could not be set again: ${(e as Error).message}`, FIX);
      }
    },
    // drained or not: the next run to take it checks (a dying pid namespace takes a moment to empty it)
    release: async () => giveBack(dir),
  };
}

/**
 * Run cgroups of this process whose run has ended, per base, the longest ended first. One may
 * still count tasks (a dying sandbox's last one stays counted for up to ~2 s here); it is taken
 * again only once `pids.current` reads 0.
 */
const idle = new Map<string, string[]>();
/**
 * Ended cgroups kept per base; the oldest beyond is removed. Enough for back-to-back runs to find
 * one that has drained: at ~8 runs/s with a ~2 s drain, about 16 are in the rotation.
 */
const MAX_IDLE = 24;
/** How many ended cgroups one run reads `pids.current` of before it makes a new one. */
const TAKE_READS = 2;
let exitHook = false;

/**
 * A cgroup for one run, with `pids.max` set to `limit`. Making and removing a cgroup per run cost
 * a run about 11 ms as root (the removal waits until the dying sandbox has left it), so the
 * cgroups of ended runs are kept and reused. One is taken only when `pids.current` reads 0 (no
 * task of an earlier run, not even a dying one, counts against this run) and its `pids.max` is
 * written again every time, so a limit changed on the host meanwhile is not inherited; any error
 * rejects, and the run fails closed. The oldest ended ones are looked at first (the likeliest to
 * have drained), at most {@link TAKE_READS} of them: one read a run, where a poll of each ended
 * run's cgroup until it drained cost 30–50 reads a run on the daemon's thread.
 */
export async function takeRunCgroup(base: string, limit: number, name: string): Promise<string> {
  const pool = idle.get(base) ?? [];
  for (let reads = 0; reads < TAKE_READS && pool.length > 0; reads++) {
    const dir = pool.shift()!;
    let current: string;
    try {
      // read at once (a counter of the kernel's, no disk): through the thread pool, queued behind
      // the run folders' removals, it took ~18 ms under load, and bwrap forked before it was adopted
      current = readFileSync(join(dir, 'pids.current'), 'utf8').trim();
    } catch {
      continue; // removed on the host: not ours any more
    }
    if (current !== '0') {
      pool.push(dir); // still counts tasks: to the back, looked at again once the others have been
      continue;
    }
    setMaxNow(dir, limit);
    return dir;
  }
  const dir = join(base, name);
  try {
    await mkdir(dir);
  } catch (e) {
    throw new PidLimitError(`the pids cgroup ${dir} cannot be made: ${(e as Error).message}`, FIX);
  }
  if (!exitHook) {
    exitHook = true;
    process.once('exit', removeIdle);
  }
  try {
    await setMax(dir, limit);
  } catch (e) {
    await removeCgroup(dir);
    throw e;
  }
  return dir;
}

/** {@link setMax} at once, for a cgroup that exists already (a write of the kernel's counter, no disk). */
function setMaxNow(dir: string, limit: number): void {
  try {
    writeFileSync(join(dir, 'pids.max'), String(limit));
  } catch (e) {
    throw new PidLimitError(`the pids cgroup ${dir} refused its limit: ${(e as Error).message}`, FIX);
  }
}

async function setMax(dir: string, limit: number): Promise<void> {
  try {
    await writeFile(join(dir, 'pids.max'), String(limit));
  } catch (e) {
    throw new PidLimitError(`the pids cgroup ${dir} refused its limit: ${(e as Error).message}`, FIX);
  }
}

/**
 * Puts a run's cgroup in the pool of ended ones at once, drained or not: {@link takeRunCgroup}
 * checks it is empty when it takes it, so nothing polls it meanwhile. The oldest beyond
 * {@link MAX_IDLE} is removed once empty.
 */
function giveBack(dir: string): void {
  const base = dir.slice(0, dir.lastIndexOf('/'));
  const pool = idle.get(base) ?? [];
  idle.set(base, pool);
  pool.push(dir);
  if (pool.length > MAX_IDLE) void removeCgroup(pool.shift()!);
}

/** The ended run cgroups this process keeps for reuse (some may still be draining), for tests and `doctor`. */
export function idleRunCgroups(base: string): readonly string[] {
  return [...(idle.get(base) ?? [])];
}

function removeIdle(): void {
  for (const pool of idle.values()) {
    for (const dir of pool.splice(0)) {
      try {
        rmdirSync(dir);
      } catch {
        // busy or gone: the next start's sweep takes it
      }
    }
  }
}

/** Removes a cgroup once its tasks are gone (a dying pid namespace can take a moment to empty); one still busy after a few seconds is left for the sweep. */
export async function removeCgroup(dir: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EBUSY') return; // gone, or not ours to remove
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Removes the cgroups of runs whose daemon is gone (named `aalis-sbx-<pid>-…` like the run folders), and their leads (`aalis-lead-<pid>-<n>`: cgroup-lead.ts; `aalis-lead-<pid>` as the first version named them). */
export function sweepStalePidCgroups(m: PidLimitMechanism): void {
  if (m.kind !== 'cgroup') return;
  let names: string[];
  try {
    names = readdirSync(m.base);
  } catch {
    return;
  }
  for (const n of names) {
    const pid = /^aalis-(?:sbx-(\d+)-|lead-(\d+)(?:-\d+)?$)/.exec(n)?.slice(1).find((p) => p !== undefined);
    if (!pid || Number(pid) === process.pid || existsSync(`/proc/${pid}`)) continue;
    try {
      rmdirSync(join(m.base, n));
    } catch {
      // still has tasks, or not ours to remove
    }
  }
}

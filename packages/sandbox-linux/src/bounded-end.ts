import { execFile } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Every wait for a sandbox's end is bounded. A sandbox ends when bwrap is reaped and the run's
 * stdout and stderr reach their EOF, that is when every process holding their write ends is gone.
 * The sandbox's pid 1 dies with bwrap only through its parent-death signal, which bwrap sets only
 * once the sandbox is set up (never while it waits on the setup sync fd); a pid 1 without it
 * outlives bwrap, reparented to init, and keeps the pipes open for ever (a daemon's stop once
 * waited on one). When the bound passes, what remains is killed through what the run owns and can
 * verify, never by a bare pid that could have been reused meanwhile:
 *   - the run's pids cgroup (pid-limit.ts): every process listed in its `cgroup.procs`;
 *   - the sandbox's pid namespace: its pid 1, once it is verified to still be it (its `NSpid` ends
 *     in 1 and one of its fds is a file of this run's folder, the launcher's FIFOs). The fd's link
 *     is a path in the holder's own mount namespace, which anything in a container or sandbox can
 *     make up (a tmpfs over /tmp, a folder of the same name), so the file it holds must be the one
 *     that path names here (same device and inode), not just have a name under the folder.
 * Each process is pinned with a pidfd before it is checked, and signalled through that pidfd
 * (python: node has no pidfd), so a pid reused between the check and the kill is never hit.
 * Then the wait is given a second bound, and after it our ends of the pipes are closed, which ends
 * it whatever still holds theirs.
 */

/** How long a sandbox may take to end after its kill before what remains of it is killed. */
export const END_GRACE_MS = 3000;
/** How long, after that, before our ends of its pipes are closed and the wait given up. */
export const AFTER_KILL_MS = 2000;

/** What a run owns that identifies what remains of its sandbox. */
export interface SandboxRemains {
  /** The run's folder: the sandbox's pid 1 holds its FIFOs (launcher runs). */
  readonly runDir: string;
  /** The sandbox's pid (pid 1 of its pid namespace), when it was read. */
  readonly pid?: number;
  /** The run's pids cgroup (a root daemon's), when it has one. */
  readonly cgroup?: string;
}

/** A sandbox that did not end within its bound: what was done to end the wait. */
export interface ForcedEnd {
  /** What identified what remained (read when the bound passed). */
  readonly remains: SandboxRemains;
  /** Pids killed through the cgroup or the verified pid namespace. */
  readonly killed: readonly number[];
  /** Our ends of its pipes were closed (it still had not ended after the kill). */
  readonly closedOurs: boolean;
  /** Even then bwrap's end was not reported: the wait was given up. */
  readonly abandoned: boolean;
}

/**
 * Waits for `ended`, at most {@link END_GRACE_MS}; then kills what remains of the sandbox
 * ({@link killRemains}), waits at most {@link AFTER_KILL_MS} again, then calls `closeOurs` (our
 * ends of its pipes) and waits once more as long. Undefined when it ended in time; else what it took.
 * Always resolves.
 */
export async function endWithin(
  ended: Promise<unknown>,
  remainsNow: () => SandboxRemains,
  closeOurs: () => void,
  options: { readonly python?: string | undefined; readonly graceMs?: number; readonly afterMs?: number } = {},
): Promise<ForcedEnd | undefined> {
  if (await settlesWithin(ended, options.graceMs ?? END_GRACE_MS)) return undefined;
  // read only now: a kill asked before the sandbox's pid was known has it by the time the bound passes
  const remains = remainsNow();
  const killed = await killRemains(remains, options.python).catch(() => [] as number[]);
  const after = options.afterMs ?? AFTER_KILL_MS;
  if (await settlesWithin(ended, after)) return { remains, killed, closedOurs: false, abandoned: false };
  try {
    closeOurs();
  } catch {
    // closed already
  }
  return { remains, killed, closedOurs: true, abandoned: !(await settlesWithin(ended, after)) };
}

/** One line for a log: which sandbox, what had to be done. */
export function forcedEndLine(what: string, forced: ForcedEnd, graceMs = END_GRACE_MS): string {
  const { remains } = forced;
  // 'verified' only where the check held and the kill went through: a pid that failed it (gone, or another process now) was left alone
  const pid1 = remains.pid === undefined ? undefined : forced.killed.includes(remains.pid) ? 'its pid 1 (verified)' : `its pid 1 (${remains.pid} was gone or no longer it: left alone)`;
  const how = [pid1, remains.cgroup ? 'its pids cgroup' : undefined].filter(Boolean).join(' and ') || 'nothing it owns (neither its pid nor a cgroup was known)';
  let line = `aalis: ${what} (${remains.runDir}) did not end within ${graceMs} ms of its kill; killed ${forced.killed.length} of its processes through ${how}`;
  if (forced.closedOurs) line += '; its output pipes were still held open, so they were closed on our side';
  if (forced.abandoned) line += '; its bwrap was still not reported reaped, and the wait was given up';
  return line;
}

/** Resolves true once `p` settles, false after `ms`. */
function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    p.then(done, done);
  });
}

/**
 * The kill, pinned by pidfd (see the file's note). argv: the run folder, the cgroup or `-`, the pid
 * or `-`. Prints the killed pids as JSON. The pid namespace first (its pid 1's death takes every
 * process in it), then the cgroup, read again until no process of it is left unkilled.
 */
const KILL_PY = `
import json, os, signal, sys, time
run_dir, cg, pid = sys.argv[1], sys.argv[2], sys.argv[3]
killed = []
def members():
    try:
        with open(os.path.join(cg, "cgroup.procs")) as h: return [int(x) for x in h.read().split()]
    except OSError: return []
def pid1_of_run(p):
    try:
        with open("/proc/%d/status" % p) as h:
            ns = next((l.split()[1:] for l in h if l.startswith("NSpid:")), [])
        if len(ns) < 2 or ns[-1] != "1": return False
        for fd in os.listdir("/proc/%d/fd" % p):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (p, fd))
                if not link.startswith(run_dir + "/"): continue
                # the link is a path in the holder's own mount namespace: it must name here the file it holds
                held, here = os.stat("/proc/%d/fd/%s" % (p, fd)), os.lstat(link)
                if (held.st_dev, held.st_ino) == (here.st_dev, here.st_ino): return True
            except OSError: pass
    except OSError: pass
    return False
def kill_if(p, ours):
    try: fd = os.pidfd_open(p)
    except OSError: return
    try:
        # checked after the pidfd is open: the pidfd is the process checked, or a dead one (ESRCH)
        if ours(p):
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            if p not in killed: killed.append(p)
    except OSError: pass
    finally: os.close(fd)
if pid != "-": kill_if(int(pid), pid1_of_run)
if cg != "-":
    for _ in range(200):
        left = [p for p in members() if p not in killed]
        if not left: break
        for p in left: kill_if(p, lambda q: q in members())
        time.sleep(0.005)
print(json.dumps(killed))
`;

/**
 * Kills what remains of a sandbox through its cgroup and its verified pid 1 (see the file's note);
 * the pids killed. Without python, the same checks in node, each read just before its kill.
 */
export async function killRemains(remains: SandboxRemains, python: string | undefined): Promise<number[]> {
  if (remains.pid === undefined && remains.cgroup === undefined) return [];
  const args = [remains.runDir, remains.cgroup ?? '-', remains.pid === undefined ? '-' : String(remains.pid)];
  if (!python) return killRemainsHere(remains);
  const out = await new Promise<string>((resolve, reject) => {
    execFile(python, ['-I', '-S', '-c', KILL_PY, ...args], { env: {}, timeout: 10_000 }, (e, stdout) => (e ? reject(e) : resolve(stdout)));
  });
  const parsed: unknown = JSON.parse(out);
  return Array.isArray(parsed) ? parsed.filter((p): p is number => typeof p === 'number') : [];
}

/** {@link KILL_PY} without pidfds: each check is read just before its kill (a far smaller window than a pid kept since the start). */
function killRemainsHere(remains: SandboxRemains): number[] {
  const killed: number[] = [];
  const kill = (pid: number) => {
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // gone
    }
  };
  if (remains.pid !== undefined && isRunPid1(remains.pid, remains.runDir)) kill(remains.pid);
  if (remains.cgroup !== undefined) {
    const members = () => {
      try {
        return readFileSync(join(remains.cgroup!, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    };
    for (const pid of members()) if (!killed.includes(pid) && members().includes(pid)) kill(pid);
  }
  return killed;
}

/** Whether `pid` is pid 1 of a pid namespace and holds a file of `runDir` (the same file its path names here). */
function isRunPid1(pid: number, runDir: string): boolean {
  try {
    const ns = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().split(/\s+/) ?? [];
    if (ns.length < 2 || ns[ns.length - 1] !== '1') return false;
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (!link.startsWith(`${runDir}/`)) return false;
        // the link is a path in the holder's own mount namespace: it must name here the file it holds
        const held = statSync(`/proc/${pid}/fd/${fd}`, { bigint: true });
        const here = lstatSync(link, { bigint: true });
        return held.dev === here.dev && held.ino === here.ino;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

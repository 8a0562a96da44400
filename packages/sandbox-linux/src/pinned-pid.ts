import { readFileSync } from 'node:fs';

/*
 * A sandbox's pid 1 is killed by pid while it waits in its setup (launch-state.ts): bwrap's death
 * does not take it then, since it sets its parent-death signal only once set up. A bare pid kept
 * since the start could name another process by then (the sandbox gone, its pid given again), so
 * the pid is pinned when it is read, while the sandbox is certainly alive (blocked on the setup
 * sync fd), by the kernel's start time of that process, and a kill first checks that the process
 * at that pid is still the one pinned: the same start time (no two processes given one pid have
 * the same one unless the pid wraps within one clock tick) and still pid 1 of a pid namespace
 * (`NSpid` ends in 1). Node has no pidfd to close the last window, between that check and the
 * kill (a few microseconds; bounded-end.ts kills through a pidfd where it has python).
 */

/** A process as it was when pinned: its pid and the kernel's start time of it (clock ticks since boot). */
export interface PinnedPid {
  readonly pid: number;
  readonly start: string;
}

/** The start time field of /proc/<pid>/stat (the 22nd; the command name before may hold spaces and parentheses). */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined; // gone
  }
}

/** Pins `pid` now; undefined when it is already gone. */
export function pinPid(pid: number): PinnedPid | undefined {
  const start = startOf(pid);
  return start === undefined ? undefined : { pid, start };
}

/** Whether the process at the pinned pid is still the one pinned, and pid 1 of a pid namespace. */
export function stillPinned(p: PinnedPid): boolean {
  if (startOf(p.pid) !== p.start) return false;
  try {
    const ns = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${p.pid}/status`, 'latin1'))?.[1]?.trim().split(/\s+/) ?? [];
    return ns.length >= 2 && ns[ns.length - 1] === '1';
  } catch {
    return false;
  }
}

/**
 * SIGKILL to the pinned process, only if it still is the one pinned ({@link stillPinned}); whether
 * it was sent. Never a bare pid: nothing is sent for a pid that was not pinned.
 */
export function killPinned(p: PinnedPid | undefined): boolean {
  if (p === undefined || !stillPinned(p)) return false;
  try {
    process.kill(p.pid, 'SIGKILL');
    return true;
  } catch {
    return false; // gone meanwhile
  }
}

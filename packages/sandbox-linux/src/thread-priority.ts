import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The nice value of the host worker threads (host-lane.ts): the walks and chores yield to the
 * daemon's event loop when both want a CPU. Linux weighs nice 0 against nice 5 as 1024 to 335, so
 * the loop gets three quarters of a contended CPU and a walk is never starved. Measured (README,
 * "CPU share"): with 8 clients, the loop's longest stall and its wait for a CPU fell; calls/s
 * stayed the same.
 */
export const HOST_WORKER_NICE = 5;

/**
 * Gives the calling thread (not its process: Linux keeps a nice value per thread) the nice value
 * `nice`. Only speed depends on it: where it cannot be set (no /proc, another system) the thread
 * goes on as it was, and false says so.
 */
export function niceThisThread(nice: number): boolean {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>", in the pid namespace of the /proc mounted:
    // one of another namespace (a host's /proc in a container) names another process's thread,
    // which setpriority would renice, so the pid must be ours
    const link = /^(\d+)\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    if (!link || Number(link[1]) !== process.pid) return false;
    const tid = Number(link[2]);
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

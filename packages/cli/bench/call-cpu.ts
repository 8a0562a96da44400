// The CPU a daemon spends per call, from /proc: its own threads (the main thread apart from the
// rest: V8's helpers, the thread pool, the walks and chores workers) and its child processes (the
// launcher, helpers, and every run they reaped: the root map, bwrap, the command). A call's cost
// on a shared machine is bounded by this, not by its latency alone: with two cores and ~100 ms of
// CPU a call, no amount of overlap gives 60 calls/s.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU times in ms: the daemon's main thread, its other threads, its children (with what they reaped). */
export interface CpuSnapshot {
  readonly main: number;
  readonly threads: number;
  readonly children: number;
}

const TICK_MS = 10; // USER_HZ 100

function fieldsOf(statPath: string): string[] | undefined {
  try {
    const raw = readFileSync(statPath, 'utf8');
    return raw.slice(raw.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return undefined; // ended between the listing and the read
  }
}

/** The daemon's CPU so far (pid: the `aalis serve` process). */
export function cpuSnapshot(pid: number): CpuSnapshot {
  let main = 0;
  let threads = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const f = fieldsOf(`/proc/${pid}/task/${tid}/stat`);
    if (!f) continue;
    const ms = (Number(f[11]) + Number(f[12])) * TICK_MS; // utime, stime
    if (tid === String(pid)) main += ms;
    else threads += ms;
  }
  let children = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = fieldsOf(`/proc/${entry}/stat`);
    if (f?.[1] !== String(pid)) continue; // ppid
    children += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS; // and what it reaped
  }
  return { main, threads, children };
}

/** Per call between two snapshots, as one line. */
export function cpuPerCall(before: CpuSnapshot, after: CpuSnapshot, calls: number): string {
  const per = (k: keyof CpuSnapshot) => (after[k] - before[k]) / calls;
  const total = per('main') + per('threads') + per('children');
  return `CPU per call ${total.toFixed(0)} ms: the daemon's main thread ${per('main').toFixed(1)} ms, its other threads ${per('threads').toFixed(1)} ms, its child processes (launcher, helpers, the runs they reaped) ${per('children').toFixed(1)} ms`;
}

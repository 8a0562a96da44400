// The `/healthz` answers of a daemon while something runs, polled every 20 ms from another process
// (so the poller's own timing is not stalled by what it measures), and the daemon's CPU time
// (every thread of its process, from /proc), for the whole of it and for a window inside it.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { ServeProcess } from '../src/daemon/serve-process.testing.js';
import { median } from '../../../test/bench/median.js';

// each answer as [when it was asked (ms since the epoch), how long it took (ms)]
const POLL = `
const url = process.argv[1] + '/healthz';
const samples = []; let stop = false;
process.stdin.on('data', () => { stop = true; }); process.stdin.resume();
(async () => { while (!stop) { const at = Date.now(); const t = performance.now(); await (await fetch(url)).text(); samples.push([at, performance.now() - t]); if (samples.length === 1) console.log('polling'); await new Promise((r) => setTimeout(r, 20)); } console.log(JSON.stringify(samples)); process.exit(0); })();`;

/** User and system CPU time of a process, all its threads, in ms. */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** What the poll saw over a stretch of time. */
export interface HealthWindow {
  readonly worst: number;
  readonly median: number;
  readonly answers: number;
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** The pid of a process whose argv has `arg`, if one runs. */
function processWith(arg: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(arg)) return Number(entry);
    } catch {
      // ended between the listing and the read
    }
  }
  return undefined;
}

/**
 * Polls while `work` runs (and for at least `minMs`): the whole stretch, and, when `marker` is
 * given, the window while a process with `marker` in its argv ran (the command itself, without
 * the scan before it and the commit after it).
 */
export async function pollHealth(daemon: ServeProcess, minMs: number, work: () => Promise<unknown>, marker?: string): Promise<{ whole: HealthWindow; during?: HealthWindow }> {
  const poller = spawn(process.execPath, ['-e', POLL, daemon.url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((resolve) =>
    poller.stdout.on('data', (d) => {
      out += d;
      if (out.includes('polling\n')) resolve();
    }),
  );
  const pid = daemon.child.pid!;
  const cpu = cpuOf(pid);
  const start = Date.now();
  let window: { from: number; to: number; cpuFrom: number; cpuTo: number } | undefined;
  let done = false;
  const watch = (async () => {
    if (marker === undefined) return;
    let seen: number | undefined;
    while (!done && seen === undefined) {
      seen = processWith(marker);
      if (seen === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    if (seen === undefined) return;
    const from = Date.now();
    const cpuFrom = cpuOf(pid);
    while (processWith(marker) === seen) await new Promise((r) => setTimeout(r, 50));
    window = { from, to: Date.now(), cpuFrom, cpuTo: cpuOf(pid) };
  })();
  await Promise.all([work(), new Promise((r) => setTimeout(r, minMs))]);
  done = true;
  await watch;
  const end = Date.now();
  const cpuMs = cpuOf(pid) - cpu;
  poller.stdin.end('stop');
  await new Promise((r) => poller.on('exit', r));
  const samples = JSON.parse(out.slice(out.indexOf('polling\n') + 8)) as [number, number][];
  const over = (from: number, to: number) => samples.filter(([at, ms]) => at + ms >= from && at <= to).map(([, ms]) => ms);
  const all = over(start, end);
  const whole = { worst: Math.max(...all), median: median(all), answers: all.length, cpuMs, wallMs: end - start };
  if (!window) return { whole };
  const inside = over(window.from, window.to);
  return { whole, during: { worst: Math.max(...inside), median: median(inside), answers: inside.length, cpuMs: window.cpuTo - window.cpuFrom, wallMs: window.to - window.from } };
}

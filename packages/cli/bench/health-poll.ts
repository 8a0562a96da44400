// The worst `/healthz` answer of a daemon while something runs, polled every 20 ms from another
// process (so the poller's own timing is not stalled by what it measures), and the daemon's CPU
// time meanwhile (every thread of its process, from /proc).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ServeProcess } from '../src/daemon/serve-process.testing.js';

const POLL = `
const url = process.argv[1] + '/healthz';
let worst = 0, answers = 0, stop = false;
process.stdin.on('data', () => { stop = true; }); process.stdin.resume();
(async () => { while (!stop) { const t = performance.now(); await (await fetch(url)).text(); worst = Math.max(worst, performance.now() - t); answers++; if (answers === 1) console.log('polling'); await new Promise((r) => setTimeout(r, 20)); } console.log(JSON.stringify({ worst, answers })); process.exit(0); })();`;

/** User and system CPU time of a process, all its threads, in ms. */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** What polling the daemon saw while `work` ran (or for `minMs`, whichever is longer). */
export async function pollHealth(daemon: ServeProcess, minMs: number, work: () => Promise<unknown>): Promise<{ worst: number; answers: number; cpuMs: number; wallMs: number }> {
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
  const start = performance.now();
  await Promise.all([work(), new Promise((r) => setTimeout(r, minMs))]);
  const wallMs = performance.now() - start;
  const cpuMs = cpuOf(pid) - cpu;
  poller.stdin.end('stop');
  await new Promise((r) => poller.on('exit', r));
  const { worst, answers } = JSON.parse(out.slice(out.indexOf('polling\n') + 8)) as { worst: number; answers: number };
  return { worst, answers, cpuMs, wallMs };
}

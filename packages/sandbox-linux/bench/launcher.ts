/*
 * The launcher's gain (launcher.ts), as root: `true` in the sandbox (overlay model, network off)
 * with the launcher on and off, interleaved, one of each per round, after BENCH_RSS_MB of memory
 * is held by this process (a daemon's host model lives in it; node's spawn is a fork whose cost
 * grows with it). Reports the medians, their ratio, and the median over runs of the longest the
 * event loop was blocked during one run (a timer every 1 ms that measures its own lateness).
 *
 *   BENCH_RUNS=40 BENCH_RSS_MB=300 npx tsx --conditions=aalis-source bench/launcher.ts
 */
import { loadavg } from 'node:os';
import { createLinuxSandbox } from '../src/index.js';
import { makeScene, req } from '../src/scene.testing.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const RSS_MB = Number(process.env.BENCH_RSS_MB ?? 0);

if (process.getuid?.() !== 0) {
  console.log('the launcher serves a root daemon: run this as root');
  process.exit(0);
}
// touched, so it is resident, as a daemon's index is
const ballast = Array.from({ length: RSS_MB }, () => Buffer.alloc(1024 * 1024, 1));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = makeScene();
const on = createLinuxSandbox({ hostModel: 'overlay' });
const off = createLinuxSandbox({ hostModel: 'overlay', launcher: 'off' });
const candidates = [
  { name: 'launcher on', sb: on, times: [] as number[], stalls: [] as number[] },
  { name: 'launcher off', sb: off, times: [] as number[], stalls: [] as number[] },
];
for (const c of candidates) await c.sb.run(req(s, ['true'])); // warm-up: probe, launcher start
for (let round = 0; round < RUNS; round++) {
  // a different one first every other round: a run's cleanup overlaps the next start
  const order = round % 2 === 0 ? candidates : [...candidates].reverse();
  for (const c of order) {
    let last = performance.now();
    let stall = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      stall = Math.max(stall, now - last - 1);
      last = now;
    }, 1);
    const t = performance.now();
    await c.sb.run(req(s, ['true']));
    c.times.push(performance.now() - t);
    c.stalls.push(stall);
    clearInterval(tick);
  }
}
console.log(`true in the sandbox, launcher on and off, median of ${RUNS} interleaved rounds, ${process.memoryUsage().rss >> 20} MB resident (ballast ${ballast.length} MB), load ${loadavg()[0]!.toFixed(1)}`);
for (const c of candidates) console.log(`  ${c.name.padEnd(14)} ${median(c.times).toFixed(1).padStart(7)} ms   longest event loop block per run, median ${median(c.stalls).toFixed(1)} ms`);
console.log(`  on / off: ${(median(candidates[0]!.times) / median(candidates[1]!.times)).toFixed(2)}x`);
await on.close();
await off.close();
s.cleanup();
process.exit(0);

/*
 * The end of a run's host-side folder (run-dir.ts), as an overlay run of the default policy leaves
 * it: ten writable roots, each an upper, a lower and a work directory the kernel left mode 000.
 * Printed: how long the event loop was held at most while it went (the daemon answers nothing
 * meanwhile), against the whole removal's time, medians over interleaved rounds; and the old
 * synchronous removal (the baseline) the same way.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeLayers } from '../src/overlay-mount.js';
import { RunDir } from '../src/run-dir.js';

const ROUNDS = Number(process.env.BENCH_RUNS ?? (process.env.BENCH_QUICK === '1' ? 5 : 30));
const ROOTS = 10;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

function fill(dir: RunDir): void {
  dir.prepareEmptyFile();
  dir.prepareEmptyDir();
  const layers = dir.prepareLayersDir();
  for (let i = 0; i < ROOTS; i++) {
    for (const d of ['upper', 'lower', 'work/work']) mkdirSync(join(layers, String(i), d), { recursive: true, mode: 0o700 });
    chmodSync(join(layers, String(i), 'work', 'work'), 0o000);
  }
}

/** The longest gap between timer ticks (1 ms apart) while `work` runs, and its whole time. */
async function held(work: () => Promise<void> | void): Promise<{ held: number; total: number }> {
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 5));
  const start = performance.now();
  last = start;
  await work();
  const total = performance.now() - start;
  worst = Math.max(worst, performance.now() - last);
  clearInterval(tick);
  return { held: worst, total };
}

const parent = mkdtempSync(join(tmpdir(), 'aalis-bench-rundir-'));
const now = { held: [] as number[], total: [] as number[] };
const before = { held: [] as number[], total: [] as number[] };
try {
  for (let round = -2; round < ROUNDS; round++) {
    const a = new RunDir(parent);
    fill(a);
    const b = new RunDir(parent);
    fill(b);
    // the baseline: what dispose did before, every call synchronous
    const sync = () => {
      rmSync(b.emptyFile);
      rmdirSync(b.emptyDir);
      removeLayers(join(b.path, 'overlay'));
      rmdirSync(b.path);
    };
    // ABBA: neither goes first every round
    const x = round % 2 === 0 ? await held(() => a.dispose()) : undefined;
    const y = await held(sync);
    const z = x ?? (await held(() => a.dispose()));
    if (round < 0) continue;
    now.held.push(z.held);
    now.total.push(z.total);
    before.held.push(y.held);
    before.total.push(y.total);
  }
} finally {
  rmSync(parent, { recursive: true, force: true });
}

const f = (x: number) => `${x.toFixed(1)} ms`;
console.log(
  `run folder removal (${ROOTS} overlay roots), ${ROUNDS} interleaved rounds, medians: event loop held ${f(median(now.held))} of ${f(median(now.total))}; baseline synchronous removal held ${f(median(before.held))} of ${f(median(before.total))}; ratio held ${(median(now.held) / median(before.held)).toFixed(2)}x`,
);

// The daemon's event loop while one conversation grows (found by an attack, h105: every message
// rewrote the whole conversation record on the daemon's thread; a hundred 1 MB messages stalled
// every client for seconds at each new one). MESSAGES person's messages of SIZE bytes appended to
// one conversation of a real store (its record written at each, fsync'd), as the daemon's
// sessions service does for POST /api/turns: the longest event-loop stall meanwhile, with the
// record bounded as shipped (CONVERSATION_MAX_BYTES) against the same appends with no bound, in
// the same run, in interleaved rounds (the order turning each round), medians.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CONVERSATION_MAX_BYTES, Sessions } from '../src/sessions.js';
import { DurableStore } from '../src/store.js';
import { median } from '../../../test/bench/median.js';
import { recordFigure } from '../../../test/bench/record-figure.js';

// BENCH_QUICK=1: 12 messages, 2 rounds (a check that it runs, not the figure)
const QUICK = process.env.BENCH_QUICK === '1';
const MESSAGES = Number(process.argv[2] ?? (QUICK ? 12 : 40));
const SIZE = Number(process.argv[3] ?? 1024 * 1024);
const ROUNDS = Number(process.argv[4] ?? (QUICK ? 2 : 5));

/** The longest event-loop stall (ms) while `MESSAGES` messages are appended to one new conversation with `maxBytes` as the bound. */
async function stallWith(maxBytes: number): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-long-conversation-'));
  try {
    const service = new Sessions(await DurableStore.open(dir), () => {}, maxBytes);
    const text = 'y'.repeat(SIZE);
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    for (let i = 0; i < MESSAGES; i++) await service.append('telegram:big', { role: 'user', content: `${i} ${text}`, from: { platform: 'telegram', userId: 'u' } });
    delay.disable();
    return delay.max / 1e6;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const bounded: number[] = [];
const unbounded: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    bounded.push(await stallWith(CONVERSATION_MAX_BYTES));
    unbounded.push(await stallWith(Number.POSITIVE_INFINITY));
  } else {
    unbounded.push(await stallWith(Number.POSITIVE_INFINITY));
    bounded.push(await stallWith(CONVERSATION_MAX_BYTES));
  }
}
const candidate = median(bounded);
const baseline = median(unbounded);
console.log(
  `one conversation, ${MESSAGES} messages of ${(SIZE / 1024).toFixed(0)} KiB, ${ROUNDS} interleaved rounds, medians of the longest event-loop stall: bounded (${CONVERSATION_MAX_BYTES / 1024 / 1024} MiB) ${candidate.toFixed(1)} ms; baseline no bound ${baseline.toFixed(1)} ms; ratio ${(candidate / baseline).toFixed(2)}x (target <= 50 ms); load ${loadavg()[0]!.toFixed(2)}`,
);
console.log(`  per round (bounded / no bound, ms): ${bounded.map((b, i) => `${b.toFixed(0)}/${unbounded[i]!.toFixed(0)}`).join(', ')}`);
recordFigure({
  id: 'core.long-conversation-stall',
  what: `the event loop's longest stall while ${MESSAGES} messages of ${(SIZE / 1024).toFixed(0)} KiB go to one conversation (its record bounded, as shipped)`,
  candidate,
  baseline: { what: 'the same appends with no bound, interleaved rounds', value: baseline },
  unit: 'ms',
  target: { on: 'value', op: '<=', limit: 50 },
  rounds: ROUNDS,
});

// Daemon start against the size of the approval audit log: an empty log (the baseline) against a
// log of LINES lines (default 1,000,000), measured in the same run, in interleaved rounds (15; the
// order turning each round), each start in a fresh process (time of the kernel's start, peak RSS of the process), medians.
// "current file": the big log stays the current file (rotation set out of reach), so the start
// stands on the side index alone; "rotating": the default rotation (64 MiB), which archives it.
// "small": SMALL lines with their index, the same start path as the big log: the big log against
// it is what depends on the log's size; the small log against the empty one is the fixed cost of
// having a log at all (open, stat, the index, a 4 KiB tail hash), which no log size changes.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { writeSyntheticAuditLog } from '../src/synthetic-audit-log.js';
import { recordFigure } from '../../../test/bench/record-figure.js';

// BENCH_QUICK=1: 20,000 lines, 3 rounds (a check that it runs, not the figure of issue 17)
const QUICK = process.env.BENCH_QUICK === '1';
const LINES = Number(process.argv[2] ?? (QUICK ? 20_000 : 1_000_000));
const ROUNDS = Number(process.argv[3] ?? (QUICK ? 3 : 15));
const SMALL = 1_000;
const CHILD = resolve(fileURLToPath(new URL('.', import.meta.url)), 'start-child.ts');
const NEVER = 2 ** 50;
const DEFAULT = 64 * 1024 * 1024;

interface Start {
  readonly ms: number;
  readonly rssMb: number;
}
async function startOn(dataDir: string, maxBytes: number): Promise<Start> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=aalis-source', CHILD, dataDir, String(maxBytes)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as Start;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

const root = await mkdtemp(join(tmpdir(), 'aalis-audit-start-'));
try {
  const dirs = { empty: join(root, 'empty'), small: join(root, 'small'), flat: join(root, 'flat'), rotating: join(root, 'rotating') };
  for (const dir of Object.values(dirs)) await mkdir(join(dir, 'approval'), { recursive: true, mode: 0o700 });
  for (const dir of [dirs.flat, dirs.rotating]) await writeSyntheticAuditLog(join(dir, 'approval', 'audit.jsonl'), LINES);
  await writeSyntheticAuditLog(join(dirs.small, 'approval', 'audit.jsonl'), SMALL);
  // the logs' gigabyte reaches the disk now, not under the rounds (its writeback slowed the starts measured first)
  await promisify(execFile)('sync');
  const bytes = (await stat(join(dirs.flat, 'approval', 'audit.jsonl'))).size;
  console.log(`audit log: ${LINES} lines, ${(bytes / 2 ** 20).toFixed(0)} MiB`);

  // The first start on a log nobody indexed yet reads it once, a chunk at a time.
  const firstFlat = await startOn(dirs.flat, NEVER);
  const firstRotating = await startOn(dirs.rotating, DEFAULT);
  const baseline = await startOn(dirs.empty, DEFAULT);
  console.log(`first start, no index yet: ${firstFlat.ms.toFixed(0)} ms, peak RSS ${firstFlat.rssMb.toFixed(0)} MB (current file); ${firstRotating.ms.toFixed(0)} ms, ${firstRotating.rssMb.toFixed(0)} MB (rotating: archived at that start); empty log ${baseline.ms.toFixed(0)} ms, ${baseline.rssMb.toFixed(0)} MB`);

  const runs: Record<keyof typeof dirs, Start[]> = { empty: [], small: [], flat: [], rotating: [] };
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  const loadBefore = load();
  // One round unmeasured: what the first starts wrote is flushed before the rounds that count.
  for (let round = -1; round < ROUNDS; round++) {
    if (round === -1) {
      for (const [dir, max] of [[dirs.empty, DEFAULT], [dirs.small, NEVER], [dirs.flat, NEVER], [dirs.rotating, DEFAULT]] as const) await startOn(dir, max);
      continue;
    }
    // the order turns each round, so no log is always the one started right after another
    const order = [['empty', DEFAULT], ['small', NEVER], ['flat', NEVER], ['rotating', DEFAULT]] as const;
    for (const [k, max] of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) runs[k].push(await startOn(dirs[k], max));
  }
  const ms = (k: keyof typeof dirs) => median(runs[k].map((r) => r.ms));
  const rss = (k: keyof typeof dirs) => median(runs[k].map((r) => r.rssMb));
  console.log(`daemon start (approval plugin), ${ROUNDS} interleaved rounds, medians; load average ${loadBefore} before, ${load()} after:`);
  console.log(`  baseline, empty log: ${ms('empty').toFixed(1)} ms, peak RSS ${rss('empty').toFixed(0)} MB`);
  console.log(`  ${SMALL} lines, current file: ${ms('small').toFixed(1)} ms (${(ms('small') / ms('empty')).toFixed(2)}x the empty log: the fixed cost of a log)`);
  console.log(`  ${LINES} lines, current file: ${ms('flat').toFixed(1)} ms (${(ms('flat') / ms('small')).toFixed(2)}x the ${SMALL}-line log: what depends on size)`);
  console.log(`  ${LINES} lines, current file: ${ms('flat').toFixed(1)} ms (${(ms('flat') / ms('empty')).toFixed(2)}x), peak RSS ${rss('flat').toFixed(0)} MB (${(rss('flat') / rss('empty')).toFixed(2)}x)`);
  console.log(`  ${LINES} lines, rotated: ${ms('rotating').toFixed(1)} ms (${(ms('rotating') / ms('empty')).toFixed(2)}x), peak RSS ${rss('rotating').toFixed(0)} MB (${(rss('rotating') / rss('empty')).toFixed(2)}x)`);
  recordFigure({ id: 'approval.start-large-audit', what: `daemon start (approval plugin) with a ${LINES}-line audit log, the current file (side index)`, candidate: ms('flat'), baseline: { what: 'an empty log', value: ms('empty') }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });
  recordFigure({ id: 'approval.start-large-audit-rss', what: `peak RSS of that start (memory flat, read as ≤ 1.2×)`, candidate: rss('flat'), baseline: { what: 'an empty log', value: rss('empty') }, unit: 'MB', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });
  recordFigure({ id: 'approval.start-large-audit-vs-small', what: `daemon start with the ${LINES}-line log against a ${SMALL}-line one, both current files with their index (what depends on the log's size)`, candidate: ms('flat'), baseline: { what: `a ${SMALL}-line log`, value: ms('small') }, unit: 'ms', rounds: ROUNDS });
  recordFigure({ id: 'approval.start-large-audit-rotated', what: `daemon start with the ${LINES}-line log rotated (archived at the first start)`, candidate: ms('rotating'), baseline: { what: 'an empty log', value: ms('empty') }, unit: 'ms', rounds: ROUNDS });
} finally {
  await rm(root, { recursive: true, force: true });
}

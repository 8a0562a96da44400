// `aalis exec --network off -- true` (this checkout's binary) with a 1,000,000-line approval audit
// log in its data directory, against the baseline of an empty one, in the same run: interleaved
// rounds, medians of wall time and of peak RSS (GNU time). The first run on the big log (no side
// index yet: it reads the log once, a chunk at a time, and rotates it) is reported on its own.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeSyntheticAuditLog } from '@aalis/plugin-approval';
import { recordFigure } from '../../../test/bench/record-figure.js';
import { benchNodeEnv } from './node-env.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { median } from '../../../test/bench/median.js';

/** The built `aalis` command, as users run it (the package's bench script builds first when sources are newer); the source form needs the TypeScript loader. */
const BIN = join(import.meta.dirname, '..', 'bin', 'aalis.cjs');

// BENCH_QUICK=1: 20,000 lines, 3 rounds (a check that it runs, not the figure of issue 17)
const QUICK = process.env.BENCH_QUICK === '1';
const LINES = Number(process.argv[2] ?? (QUICK ? 20_000 : 1_000_000));
const ROUNDS = Number(process.argv[3] ?? (QUICK ? 3 : 9));

const root = mkdtempSync(join(TEST_SCRATCH, 'aalis-exec-audit-'));
const workspace = join(root, 'workspace');
mkdirSync(workspace);

function exec(data: string): { ms: number; rssMb: number } {
  const start = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'maxrss=%M', process.execPath, BIN, 'exec', '--network', 'off', '--', 'true'], {
    cwd: workspace,
    // in its own process: what this measures (the start's reading of the log, its memory) is the process's
    env: benchNodeEnv({ AALIS_DATA: data, AALIS_EXEC_HELPER: 'off' }),
    encoding: 'utf8',
  });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`aalis exec failed (${r.status}): ${r.stderr}`);
  const kb = Number(/maxrss=(\d+)/.exec(r.stderr)?.[1] ?? Number.NaN);
  return { ms, rssMb: kb / 1024 };
}

try {
  const empty = join(root, 'empty');
  const big = join(root, 'big');
  mkdirSync(join(big, 'approval'), { recursive: true, mode: 0o700 });
  await writeSyntheticAuditLog(join(big, 'approval', 'audit.jsonl'), LINES);
  const bytes = statSync(join(big, 'approval', 'audit.jsonl')).size;
  exec(empty);
  const first = exec(big);
  console.log(`aalis exec with a ${LINES}-line audit log (${(bytes / 2 ** 20).toFixed(0)} MiB): first run, no index yet: ${first.ms.toFixed(0)} ms, peak RSS ${first.rssMb.toFixed(0)} MB`);
  const runs = { empty: [] as { ms: number; rssMb: number }[], big: [] as { ms: number; rssMb: number }[] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.empty.push(exec(empty));
    runs.big.push(exec(big));
  }
  const ms = (k: keyof typeof runs) => median(runs[k].map((r) => r.ms));
  const rss = (k: keyof typeof runs) => median(runs[k].map((r) => r.rssMb));
  console.log(
    `aalis exec --network off -- true, ${ROUNDS} interleaved rounds, medians: ${LINES}-line log ${ms('big').toFixed(0)} ms, peak RSS ${rss('big').toFixed(0)} MB; ` +
      `baseline empty log ${ms('empty').toFixed(0)} ms, ${rss('empty').toFixed(0)} MB; ratio ${(ms('big') / ms('empty')).toFixed(2)}x time (target 1.2x), ${(rss('big') / rss('empty')).toFixed(2)}x memory`,
  );
  recordFigure({ id: 'cli.exec-large-audit', what: `\`aalis exec --network off -- true\`, built, with a ${LINES}-line audit log`, candidate: ms('big'), baseline: { what: 'an empty log', value: ms('empty') }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });
  recordFigure({ id: 'cli.exec-large-audit-rss', what: `peak RSS of that \`aalis exec\` with the ${LINES}-line log (memory flat, read as ≤ 1.2×)`, candidate: rss('big'), baseline: { what: 'an empty log', value: rss('empty') }, unit: 'MB', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });
} finally {
  rmSync(root, { recursive: true, force: true });
}

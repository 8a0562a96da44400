/*
 * The CPU a prepared sandbox's shim costs to start (prepared.ts), paid once per prepared sandbox,
 * so once per call of a daemon that prepares: the perl shim, fed the payload of `true`, against the
 * python3 it replaced (`-I -S`, its two imports, then exec of the same `true`). Each batch is one
 * `sh` that starts BATCH of them in turn and prints `times`, whose second line is its children's
 * user and system CPU, summed by the kernel (each start alone is below `times`' resolution).
 * Interleaved batches, one of each per round, medians; printed per start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { recordFigure, recordSkipped } from '../../../test/bench/record-figure.js';
import { SHIM_PL, SHIM_TAG, shimPayload } from '../src/prepared.js';
import { findPerl, findPython } from '../src/system-interpreters.js';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_RUNS ?? (QUICK ? 5 : 15));
const BATCH = 40;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const perl = findPerl();
const python = findPython();
if (!perl || !python) {
  const why = `needs the system's perl and python3 (found perl ${perl ?? 'none'}, python3 ${python ?? 'none'})`;
  console.log(`shim start: ${why}; skipped`);
  recordSkipped(['sandbox-linux.shim-start-cpu'], why);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'aalis-shim-bench-'));
const payload = join(dir, 'payload');
writeFileSync(payload, shimPayload({ argv: ['true'], cwd: dir, stdin: undefined }, { PATH: '/usr/bin:/bin' }, 'bench'));
const formerPython = 'import _signal, posix\nposix.write(1, b"\\n")\nposix.execv(b"/bin/true", [b"true"])';
const candidates = [
  { name: 'perl shim', argv: [perl, '-e', SHIM_PL, SHIM_TAG, 'bench'], cpu: [] as number[] },
  { name: 'python3 -I -S, the former shim', argv: [python, '-I', '-S', '-c', formerPython, SHIM_TAG, 'bench'], cpu: [] as number[] },
];

/** CPU ms per start of `argv`, from one batch of BATCH starts in one shell. */
async function batch(argv: readonly string[]): Promise<number> {
  const script = `i=0; while [ $i -lt ${BATCH} ]; do "$@" < "${payload}" > /dev/null || exit 1; i=$((i+1)); done; times`;
  const { stdout } = await execa('/bin/sh', ['-c', script, 'sh', ...argv], { env: { PATH: '/usr/bin:/bin' }, extendEnv: false });
  // `times`: the shell's own user and system time, then its children's (dash and bash: 0m0.123s)
  const children = stdout.trim().split('\n').at(-1)!;
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  if (secs.length !== 2) throw new Error(`cannot read \`times\`: ${JSON.stringify(stdout)}`);
  return ((secs[0]! + secs[1]!) * 1000) / BATCH;
}

try {
  for (const c of candidates) await batch(c.argv); // warm-up: the page cache
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? candidates : [...candidates].reverse();
    for (const c of order) c.cpu.push(await batch(c.argv));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const [ours, former] = candidates.map((c) => median(c.cpu)) as [number, number];
console.log(`the shim's start, CPU per start (user + system, ${BATCH} a batch), median of ${ROUNDS} interleaved rounds, load ${loadavg()[0]!.toFixed(1)}`);
for (const c of candidates) console.log(`  ${c.name.padEnd(32)} ${median(c.cpu).toFixed(2).padStart(7)} ms`);
console.log(`  perl / python: ${(ours / former).toFixed(2)}x`);
recordFigure({
  id: 'sandbox-linux.shim-start-cpu',
  what: "CPU of a prepared sandbox's shim start (perl, fed the payload of `true`, exec'ing it), paid once per call of a daemon that prepares",
  candidate: ours,
  baseline: { what: 'python3 -I -S with the former shim\'s imports, exec\'ing the same `true`', value: former },
  unit: 'ms',
  rounds: ROUNDS * BATCH,
});

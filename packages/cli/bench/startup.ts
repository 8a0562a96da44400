/*
 * `pnpm bench` (cli): start-up of the built `aalis` command against a bare `node -e 0`, measured in
 * interleaved rounds (one of each per round, so a busy machine slows all three alike), medians and
 * ratios. Targets (issue 17): `aalis --help` ≤ 1.5×, `aalis exec --network off -- true` ≤ 2.5×.
 * Runs bin/aalis.cjs, which imports dist/ (exec: its bundle, dist/aalis-exec.cjs): the package script
 * builds first when sources are newer. The warm-up's first `aalis exec` starts the exec helper
 * (src/exec-server.ts), and the timed `aalis exec` goes through it, as a user's second run on does;
 * the same command with AALIS_EXEC_HELPER=off is timed beside it (in its own process, as a first
 * run). `aalis exec --help` (helper off) loads exec's whole module graph and starts no sandbox, so
 * the per-phase line splits the in-process exec into node's start, the module graph, and the rest
 * (the runtime's start, the probe from its cache, the sandboxed run, the exit).
 * AALIS_BENCH_COMPARE=<another checkout's bin/aalis.cjs> adds its two cases to the same rounds
 * (before and after a change, measured alike). One more `aalis exec` per round, with
 * bench/phase-marks.cjs preloaded (so not one of the timed cases), prints the run by phase from its
 * own marks (src/exec-phases.ts): where every ms goes from the process's start to its end.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { recordFigure } from '../../../test/bench/record-figure.js';
import { benchNodeEnv } from './node-env.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { median } from '../../../test/bench/median.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (process.env.BENCH_QUICK === '1' ? 5 : 15));
const bin = join(import.meta.dirname, '..', 'bin', 'aalis.cjs');
const root = mkdtempSync(join(TEST_SCRATCH, 'aalis-startup-'));
const workspace = join(root, 'workspace');
mkdirSync(workspace);
const env = benchNodeEnv({ AALIS_DATA: join(root, 'data') });
const phaseLog = join(root, 'phases.jsonl');
// in-process: the phases are the bundle's (a run through the helper loads none of it)
const phased = ['-r', join(import.meta.dirname, 'phase-marks.cjs'), bin, 'exec', '--network', 'off', '--', 'true'];

const cases: { name: string; args: readonly string[]; target: number | undefined; env?: Record<string, string> }[] = [
  { name: 'node -e 0', args: ['-e', '0'], target: undefined },
  { name: 'aalis --help', args: [bin, '--help'], target: 1.5 },
  { name: 'aalis exec --network off -- true', args: [bin, 'exec', '--network', 'off', '--', 'true'], target: 2.5 },
  // the same in this process, as with no exec helper (the first run, or AALIS_EXEC_HELPER=off)
  { name: 'the same in-process (helper off)', args: [bin, 'exec', '--network', 'off', '--', 'true'], target: undefined, env: { AALIS_EXEC_HELPER: 'off' } },
  { name: 'aalis exec --help', args: [bin, 'exec', '--help'], target: undefined, env: { AALIS_EXEC_HELPER: 'off' } },
];
const compare = process.env.AALIS_BENCH_COMPARE;
if (compare !== undefined) {
  // a data directory of its own: another build may key its probe cache otherwise, and the two
  // would then overwrite each other's entry and both probe every round
  const own = { AALIS_DATA: join(root, 'data-compared') };
  cases.push(
    { name: 'compared: aalis --help', args: [compare, '--help'], target: undefined, env: own },
    { name: 'compared: aalis exec --network off -- true', args: [compare, 'exec', '--network', 'off', '--', 'true'], target: undefined, env: own },
  );
}

function once(args: readonly string[], extraEnv: Record<string, string> = {}): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: workspace, env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const took = performance.now() - started;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return took;
}

/** Waits (10 s at most) until the exec helper for this checkout's bundle answers, as the timed runs would find it. */
async function helperUp(): Promise<void> {
  const { helperSocket } = (await import(join(import.meta.dirname, '..', 'bin', 'exec-client.cjs'))) as { helperSocket(bundle: string, env: NodeJS.ProcessEnv): string | undefined };
  const socket = helperSocket(join(import.meta.dirname, '..', 'dist', 'aalis-exec.cjs'), env);
  if (socket === undefined) return void console.log('  (no exec helper for this user here: every run is in-process)');
  const { createConnection } = await import('node:net');
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const up = await new Promise<boolean>((resolve) => {
      const c = createConnection(socket, () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (up) return;
  }
  console.log(`  (the exec helper did not answer at ${socket} within 10 s: the runs below may be in-process)`);
}

try {
  for (const c of cases) once(c.args, c.env); // warm the page cache and the data directory
  await helperUp(); // the first run started the exec helper: the timed runs go through it, as a user's next ones do
  once(phased, { AALIS_BENCH_PHASES: phaseLog, AALIS_EXEC_HELPER: 'off' }); // its line is skipped below
  const times = cases.map(() => [] as number[]);
  const phaseWalls: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, c] of cases.entries()) times[i]!.push(once(c.args, c.env));
    phaseWalls.push(once(phased, { AALIS_BENCH_PHASES: phaseLog, AALIS_EXEC_HELPER: 'off' }));
  }
  const base = median(times[0]!);
  console.log(`start-up of the built aalis command, ${ROUNDS} interleaved rounds, medians:`);
  cases.forEach((c, i) => {
    const m = median(times[i]!);
    const ratio = m / base;
    const verdict = i === 0 ? 'baseline' : c.target === undefined ? `${ratio.toFixed(2)}×` : `${ratio.toFixed(2)}× (target ≤ ${c.target}×: ${ratio <= c.target ? 'met' : 'missed'})`;
    console.log(`  ${c.name.padEnd(36)} ${m.toFixed(1).padStart(7)} ms  ${verdict}`);
  });
  const [exec, execHelp] = [median(times[3]!), median(times[4]!)];
  recordFigure({ id: 'cli.startup-help', what: '`aalis --help`, built', candidate: median(times[1]!), baseline: { what: '`node -e 0`', value: base }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.5 }, rounds: ROUNDS });
  recordFigure({ id: 'cli.startup-exec', what: '`aalis exec --network off -- true`, built, through the exec helper a first run started (a user\'s second run on)', candidate: median(times[2]!), baseline: { what: '`node -e 0`', value: base }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 2.5 }, rounds: ROUNDS });
  recordFigure({ id: 'cli.startup-exec-in-process', what: 'the same in its own process, from its bundle (the first run, or `AALIS_EXEC_HELPER=off`)', candidate: exec, baseline: { what: '`node -e 0`', value: base }, unit: 'ms', rounds: ROUNDS });
  console.log(`  exec in-process by phase: node ${base.toFixed(1)} ms, module graph ${(execHelp - base).toFixed(1)} ms, runtime + probe + sandboxed run + exit ${(exec - execHelp).toFixed(1)} ms`);
  printPhases(phaseWalls);
} finally {
  rmSync(root, { recursive: true, force: true });
}

/**
 * The phased runs' marks (ms since their process started), as medians of each phase's length:
 * node's bootstrap, the bundle's read and compile, its modules' evaluation, then exec's own phases,
 * and what is left of the wall time after the exit event (the process's teardown, the spawn).
 */
function printPhases(walls: readonly number[]): void {
  const runs = readFileSync(phaseLog, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as Record<string, number>);
  const steps: [string, string, string][] = [
    ['node start-up', '', 'bootstrap'],
    ['read + compile the bundle', 'bootstrap', 'compiled'],
    ['evaluate its modules', 'compiled', 'loaded'],
    ['runtime: kernel, plugins, sandbox service', 'loaded', 'runtime'],
    ['wait for the sandbox probe', 'runtime', 'probed'],
    ['the command: policy, sandboxed run, commit', 'probed', 'ran'],
    ['stop the runtime', 'ran', 'stopped'],
    ['flush output, exit event', 'stopped', 'exit'],
  ];
  const exits = runs.map((r) => r.exit!);
  console.log(`  exec by its own marks (${runs.length} runs with bench/phase-marks.cjs preloaded, medians; wall ${median(walls).toFixed(1)} ms):`);
  for (const [what, from, to] of steps) console.log(`    ${what.padEnd(44)} ${median(runs.map((r) => r[to]! - (from ? r[from]! : 0))).toFixed(1).padStart(7)} ms`);
  console.log(`    ${'process teardown and spawn (wall - exit)'.padEnd(44)} ${median(walls.map((w, i) => w - exits[i]!)).toFixed(1).padStart(7)} ms`);
}

// `aalis exec --backend docker -- true` (this checkout's binary) with the probe cache warm
// against the same with it removed before each run (each run then starts a whole probe
// container, as every run did before the cache), interleaved rounds, medians. Skipped without
// an engine or the image (AALIS_DOCKER_IMAGE, default the test image).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { recordFigure, recordSkipped } from '../../../test/bench/record-figure.js';
import { benchNodeEnv } from './node-env.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { median } from '../../../test/bench/median.js';

/** The built `aalis` command, as users run it (the package's bench script builds first when sources are newer); the source form needs the TypeScript loader. */
const BIN = join(import.meta.dirname, '..', 'bin', 'aalis.cjs');

const IMAGE = process.env.AALIS_DOCKER_IMAGE ?? 'aalis/sandbox-test:latest';
const ROUNDS = Number(process.argv[2] ?? (process.env.BENCH_QUICK === '1' ? 2 : 7));

if (spawnSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' }).status !== 0) {
  console.log(`exec-docker bench skipped: no engine or no image ${IMAGE}`);
  recordSkipped(['cli.exec-docker-probe-cache'], `no docker engine or no image ${IMAGE} (scripts/setup.sh starts dockerd and builds it)`);
  process.exit(0);
}
const root = mkdtempSync(join(TEST_SCRATCH, 'aalis-exec-docker-'));
const workspace = join(root, 'workspace');
mkdirSync(workspace);
const data = join(root, 'data');
// in its own process: the probe cache is what a new process finds (a helper keeps its probe in memory)
const env = benchNodeEnv({ AALIS_DATA: data, AALIS_DOCKER_IMAGE: IMAGE, AALIS_INSTANCE: 'bench-exec-docker', AALIS_EXEC_HELPER: 'off' });

function exec(): number {
  const start = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'exec', '--backend', 'docker', '--tier', 'readonly', '--', 'true'], { cwd: workspace, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`aalis exec failed (${r.status}): ${r.stderr}`);
  return performance.now() - start;
}

try {
  exec();
  const runs = { cached: [] as number[], probing: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.cached.push(exec());
    rmSync(join(data, 'cache', 'docker-probe.json'), { force: true });
    runs.probing.push(exec());
  }
  const c = median(runs.cached);
  const p = median(runs.probing);
  console.log(`aalis exec --backend docker -- true, ${ROUNDS} interleaved rounds, medians: probe cache warm ${c.toFixed(0)} ms; baseline probing each run (a probe container) ${p.toFixed(0)} ms; ratio ${(c / p).toFixed(2)}x`);
  recordFigure({ id: 'cli.exec-docker-probe-cache', what: '`aalis exec --backend docker -- true` with the probe cache warm', candidate: c, baseline: { what: 'probing at each run (a whole probe container)', value: p }, unit: 'ms', rounds: ROUNDS });
} finally {
  rmSync(root, { recursive: true, force: true });
}

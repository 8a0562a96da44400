// The docker paths against what the engine costs without us, in the same run, in interleaved
// rounds (medians): a hardened one-shot `DockerSandbox.run` of `true` against a raw
// `docker run --rm --network none` of the same image, and `SessionContainer.exec` against a raw
// `docker exec` into a plain container of the same image. Both of ours are checked from inside
// (no capabilities, no_new_privs) before anything is timed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { DockerSandbox } from '../src/index.js';
import { recordFigure, recordSkipped } from '../../../test/bench/record-figure.js';

const IMAGE = process.env.AALIS_SANDBOX_TEST_IMAGE ?? 'aalis/sandbox-test:latest';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (process.env.BENCH_QUICK === '1' ? 3 : 15));
const policy: SandboxPolicy = { readDeny: [], readAllowWithin: [], write: [], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [] };
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-bench-')));
const LABEL = 'aalis.bench=sandbox-docker';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
async function timed(once: () => Promise<unknown> | unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await once();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
function docker(args: string[]): string {
  const r = spawnSync('docker', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`docker ${args[0]} failed: ${r.stderr}`);
  return r.stdout;
}
function baselineOf(status: string): string {
  const cap = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  const nnp = /^NoNewPrivs:\s*(\d)$/m.exec(status)?.[1];
  if (cap === undefined || !/^0+$/.test(cap) || nnp !== '1') throw new Error(`the hardening baseline is not there from inside:\n${status}`);
  return `CapEff ${cap}, NoNewPrivs ${nnp}`;
}

const box = new DockerSandbox({ images: { stdio: IMAGE }, instance: 'bench' });
const probe = await box.probe();
if (!probe.available) {
  console.log(`sandbox-docker bench skipped: ${probe.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`).join('; ')}`);
  recordSkipped(['sandbox-docker.one-shot', 'sandbox-docker.one-shot-writable', 'sandbox-docker.session-exec', 'sandbox-docker.session-exec-writable'], `the docker backend is not available here (${probe.checks.filter((c) => !c.ok).map((c) => c.name).join(', ')}; scripts/setup.sh starts dockerd and builds the image)`);
  process.exit(0);
}

const oneShotInside = await box.run({ argv: ['cat', '/proc/self/status'], cwd, env: {}, timeoutMs: 30_000, policy });
const session = await box.openSession({ cwd, env: {}, policy });
// what the daemon opens: the workspace writable, so every command's sweep and check hold it still (hold-still.ts)
const writable: SandboxPolicy = { ...policy, write: [cwd] };
const sessionRw = await box.openSession({ cwd, env: {}, policy: writable });
const raw = docker(['run', '--detach', '--rm', '--label', LABEL, '--network', 'none', '--entrypoint', 'sleep', IMAGE, '3600']).trim();
try {
  const sessionInside = await session.exec({ argv: ['cat', '/proc/self/status'], timeoutMs: 30_000 });
  console.log(`sandbox-docker: baseline from inside: one-shot ${baselineOf(oneShotInside.stdout)}; session exec ${baselineOf(sessionInside.stdout)}`);

  const runs = { rawRun: [] as number[], oneShot: [] as number[], oneShotRw: [] as number[], rawExec: [] as number[], exec: [] as number[], execRw: [] as number[] };
  for (let round = -1; round < ROUNDS; round++) {
    const sample = {
      rawRun: await timed(() => spawnSync('docker', ['run', '--rm', '--pull', 'never', '--label', LABEL, '--network', 'none', IMAGE, 'true'])),
      oneShot: await timed(() => box.run({ argv: ['true'], cwd, env: {}, timeoutMs: 30_000, policy })),
      oneShotRw: await timed(() => box.run({ argv: ['true'], cwd, env: {}, timeoutMs: 30_000, policy: writable })),
      rawExec: await timed(() => spawnSync('docker', ['exec', raw, 'true'])),
      exec: await timed(() => session.exec({ argv: ['true'], timeoutMs: 30_000 })),
      execRw: await timed(() => sessionRw.exec({ argv: ['true'], timeoutMs: 30_000 })),
    };
    if (round === -1) continue; // warm-up
    for (const key of Object.keys(runs) as (keyof typeof runs)[]) runs[key].push(sample[key]);
  }
  const m = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])) as Record<keyof typeof runs, number>;
  console.log(`sandbox-docker: ${ROUNDS} interleaved rounds, medians; engine ${probe.checks[0]?.detail}`);
  console.log(`  one-shot: hardened DockerSandbox.run of true ${m.oneShot.toFixed(1)} ms; baseline raw docker run --rm --network none ${m.rawRun.toFixed(1)} ms; ratio ${(m.oneShot / m.rawRun).toFixed(2)}x (target 1.3x)`);
  console.log(`  one-shot, workspace writable: ${m.oneShotRw.toFixed(1)} ms; ratio ${(m.oneShotRw / m.rawRun).toFixed(2)}x (target 1.3x)`);
  console.log(`  session: SessionContainer.exec of true ${m.exec.toFixed(1)} ms; baseline raw docker exec ${m.rawExec.toFixed(1)} ms; ratio ${(m.exec / m.rawExec).toFixed(2)}x (target 1.5x)`);
  console.log(`  session, workspace writable: ${m.execRw.toFixed(1)} ms; ratio ${(m.execRw / m.rawExec).toFixed(2)}x (target 1.5x)`);
  recordFigure({ id: 'sandbox-docker.one-shot', what: 'a hardened one-shot `DockerSandbox.run` of `true` (baseline checked from inside)', candidate: m.oneShot, baseline: { what: 'raw `docker run --rm --network none`, same image', value: m.rawRun }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.3 }, rounds: ROUNDS });
  recordFigure({ id: 'sandbox-docker.one-shot-writable', what: 'the same with the workspace writable (as the daemon runs it): its set-up and check hold still what writes there', candidate: m.oneShotRw, baseline: { what: 'raw `docker run --rm --network none`, same image', value: m.rawRun }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.3 }, rounds: ROUNDS });
  recordFigure({ id: 'sandbox-docker.session-exec', what: '`SessionContainer.exec` of `true` in a per-conversation container', candidate: m.exec, baseline: { what: 'raw `docker exec`', value: m.rawExec }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.5 }, rounds: ROUNDS });
  recordFigure({ id: 'sandbox-docker.session-exec-writable', what: 'the same with the workspace writable (as the daemon opens it): a sweep before and a check after each command, the container held still for both', candidate: m.execRw, baseline: { what: 'raw `docker exec`', value: m.rawExec }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.5 }, rounds: ROUNDS });
} finally {
  await session.close();
  await sessionRw.close();
  spawnSync('docker', ['rm', '--force', raw]);
}

// One-shot `docker run` of `true` against a bare `true`, and `docker exec` into a reused session
// container: medians side by side, ratios against the bare process measured in the same run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { DockerSandbox } from '../src/index.js';

const IMAGE = process.env.AALIS_SANDBOX_TEST_IMAGE ?? 'aalis/sandbox-test:latest';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const policy: SandboxPolicy = { readDeny: [], readAllowWithin: [], write: [], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [] };
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-bench-')));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function time(label: string, rounds: number, once: () => Promise<unknown> | unknown): Promise<{ label: string; ms: number }> {
  await once(); // warm-up: first-call costs (image layers, module load) are not the steady state
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    await once();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { label, ms: median(samples) };
}

const box = new DockerSandbox({ images: { stdio: IMAGE }, instance: 'bench' });
const probe = await box.probe();
if (!probe.available) {
  console.log(`sandbox-docker bench skipped: ${probe.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`).join('; ')}`);
  process.exit(0);
}

const bare = await time('bare `true` (spawn)', ROUNDS * 2, () => spawnSync('true'));
const rawRun = await time('raw `docker run --rm` (CLI, no policy work)', ROUNDS, () =>
  spawnSync('docker', ['run', '--rm', '--pull', 'never', '--network', 'none', '--log-driver', 'none', IMAGE, 'true']),
);
const oneShot = await time('DockerSandbox.run (hardened one-shot)', ROUNDS, () => box.run({ argv: ['true'], cwd, env: {}, timeoutMs: 30_000, policy }));
const session = await box.openSession({ cwd, env: {}, policy });
const exec = await time('SessionContainer.exec (`docker exec`)', ROUNDS, () => session.exec({ argv: ['true'], timeoutMs: 30_000 }));
await session.close();

console.log(`sandbox-docker: median of ${ROUNDS} runs each (bare: ${ROUNDS * 2}), engine ${probe.checks[0]?.detail}`);
for (const row of [bare, rawRun, oneShot, exec]) {
  console.log(`  ${row.label.padEnd(48)} ${row.ms.toFixed(2).padStart(9)} ms   x${(row.ms / bare.ms).toFixed(1)} bare`);
}
console.log(`  one-shot / exec: x${(oneShot.ms / exec.ms).toFixed(1)}`);

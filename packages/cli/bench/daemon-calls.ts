// Tool calls through the real daemon's HTTP API (the `aalis serve` binary of this checkout), in
// the same run, interleaved rounds, medians:
// 1. `list_dir` with 100,000 known conversations against the baseline of one (sessions index);
// 2. throughput of `run_command true` (network off): sequential calls/s, and 8 concurrent clients
//    against that sequential baseline.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from '../src/daemon/serve-process.testing.js';

const KNOWN = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 30);
const CALLS = Number(process.argv[4] ?? 60);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

/** A deployment whose daemon has seen `count` conversations before it starts. */
function deploymentWith(count: number): string {
  const dir = deploymentDir({ owners: { chat: ['alice'] } });
  mkdirSync(join(dir, 'data', 'daemon'), { recursive: true, mode: 0o700 });
  const at = new Date().toISOString();
  const sessions = Array.from({ length: count }, (_, i) => ({ id: `chat-${i}`, platform: 'chat', firstSeen: at, lastSeen: at }));
  writeFileSync(join(dir, 'data', 'daemon', 'sessions.json'), JSON.stringify({ v: 1, sessions }), { mode: 0o600 });
  return dir;
}

async function call(daemon: ServeProcess, tool: string, params: unknown, session: string): Promise<number> {
  const start = performance.now();
  const answer = await daemon.api('POST', '/api/tools/call', { tool, params, turn: ownerTurn(session) });
  if (answer.status !== 200 || answer.body.ok !== true) throw new Error(`${tool} failed: ${JSON.stringify(answer.body).slice(0, 400)}`);
  return performance.now() - start;
}

const dirs = [deploymentWith(1), deploymentWith(KNOWN)];
const [one, many] = await Promise.all(dirs.map((d) => startServe(d)));
if (!one || !many) throw new Error('a daemon did not start');
try {
  // 1. The conversation index: a known conversation each call (the index notes it every time).
  const times = { one: [] as number[], many: [] as number[] };
  for (let round = -2; round < ROUNDS; round++) {
    const a = await call(one, 'list_dir', { path: '.' }, 'chat-0');
    const b = await call(many, 'list_dir', { path: '.' }, `chat-${round < 0 ? 0 : round % KNOWN}`);
    if (round < 0) continue;
    times.one.push(a);
    times.many.push(b);
  }
  const m1 = median(times.one);
  const mN = median(times.many);
  console.log(`list_dir through the daemon, ${ROUNDS} interleaved rounds, medians: ${KNOWN} known conversations ${mN.toFixed(1)} ms; baseline 1 known conversation ${m1.toFixed(1)} ms; ratio ${(mN / m1).toFixed(2)}x (target 1.2x)`);

  // 2. Throughput of run_command true, network off.
  const run = (client: number, i: number) => call(one, 'run_command', { command: 'true', network: 'off' }, `chat-t${client}-${i % 4}`);
  await run(0, 0);
  let start = performance.now();
  for (let i = 0; i < CALLS; i++) await run(0, i);
  const sequential = CALLS / ((performance.now() - start) / 1000);
  start = performance.now();
  await Promise.all(Array.from({ length: 8 }, async (_, client) => {
    for (let i = 0; i < CALLS / 8; i++) await run(client, i);
  }));
  const concurrent = (8 * Math.floor(CALLS / 8)) / ((performance.now() - start) / 1000);
  console.log(`run_command true (network off) through the daemon: sequential ${sequential.toFixed(1)} calls/s (target 60); 8 concurrent clients ${concurrent.toFixed(1)} calls/s, ratio ${(concurrent / sequential).toFixed(2)}x the sequential baseline (target 1.5x)`);
} finally {
  await Promise.all([one.stop(), many.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

// Two built daemons side by side: this checkout's and another's (a worktree of the commit to compare
// with, built: `git worktree add /tmp/base <rev> && cd /tmp/base && pnpm install --offline && pnpm build`),
// or this checkout's twice with another environment for B. Interleaved rounds (ABBA), each round per
// daemon: 16 sequential calls of `run_command true` (network off), then 8 clients x 6 calls, with the
// daemon's event loop over the clients' window (`/api/status/event-loop`: the longest stall, its own
// part, the thread's wait for a CPU). Medians over the rounds, every round printed. Not part of
// `pnpm bench` (which measures one tree against baselines of its own): a tool for a change's A/B.
//   tsx bench/daemon-ab.ts [other checkout] [rounds]     AB_ENV_B='{"NAME":"value"}' for B's environment
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from '../src/daemon/serve-process.testing.js';
import { median } from '../../../test/bench/median.js';

const here = fileURLToPath(new URL('../scripts/checkout.mjs', import.meta.url));
const other = process.argv[2] && process.argv[2] !== '-' ? join(resolve(process.argv[2]), 'packages', 'cli', 'scripts', 'checkout.mjs') : here;
const ROUNDS = Number(process.argv[3] ?? 10);
const envB = JSON.parse(process.env.AB_ENV_B ?? '{}') as Record<string, string>;
// the built code resolves @aalis/* to dist/, so never with the source condition
const NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '').replace(/--conditions[= ]aalis-source/g, '').trim();
const sides = [
  { name: 'A', what: here, env: { NODE_OPTIONS } },
  { name: 'B', what: `${other}${Object.keys(envB).length ? ` with ${JSON.stringify(envB)}` : ''}`, env: { NODE_OPTIONS, ...envB } },
] as const;
const daemons = await Promise.all(sides.map((s, i) => startServe(deploymentDir({ owners: { chat: ['alice'] } }), [], s.env, i === 0 ? here : other)));

interface Loop {
  maxMs: number;
  ownMaxMs?: number | null;
  cpuWaitMs?: number | null;
}

async function call(d: ServeProcess, client: number, i: number): Promise<void> {
  const res = await fetch(`${d.url}/api/tools/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool: 'run_command', params: { command: 'true', network: 'off' }, turn: ownerTurn(`chat-t${client}-${i % 4}`) }),
  });
  const body = (await res.json()) as { ok?: boolean };
  if (body.ok !== true) throw new Error(`run_command failed: ${JSON.stringify(body).slice(0, 400)}`);
}

// every conversation known before the rounds (a conversation's first call writes its index entry)
for (const d of daemons) for (let c = 0; c < 8; c++) for (let k = 0; k < 4; k++) await call(d, c, k);
const figures = ['stall', 'own', 'cpuWait', 'clients', 'sequential'] as const;
const got = sides.map(() => Object.fromEntries(figures.map((f) => [f, [] as number[]])) as Record<(typeof figures)[number], number[]>);
for (let round = 0; round < ROUNDS; round++) {
  for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
    const d = daemons[i]!;
    let start = performance.now();
    for (let k = 0; k < 16; k++) await call(d, 0, k);
    got[i]!.sequential.push(16_000 / (performance.now() - start));
    await d.api('POST', '/api/status/event-loop');
    start = performance.now();
    await Promise.all(Array.from({ length: 8 }, async (_, c) => {
      for (let k = 0; k < 6; k++) await call(d, c, k);
    }));
    got[i]!.clients.push(48_000 / (performance.now() - start));
    const loop = (await d.api('GET', '/api/status/event-loop')).body as Loop;
    got[i]!.stall.push(loop.maxMs);
    got[i]!.own.push(loop.ownMaxMs ?? Number.NaN);
    got[i]!.cpuWait.push(loop.cpuWaitMs ?? Number.NaN);
  }
}
const units = { stall: 'ms', own: 'ms', cpuWait: 'ms', clients: 'calls/s', sequential: 'calls/s' } as const;
console.log(`8 clients x 6 calls and 16 sequential calls of run_command true per round, ${ROUNDS} interleaved rounds, medians [each round]`);
sides.forEach((s, i) => {
  console.log(`${s.name}: ${s.what}`);
  for (const f of figures) console.log(`  ${f.padEnd(10)} ${median(got[i]![f]).toFixed(1).padStart(7)} ${units[f].padEnd(7)} [${got[i]![f].map((x) => x.toFixed(0)).join(' ')}]`);
});
for (const f of figures) console.log(`  ${f} A/B ${(median(got[0]![f]) / median(got[1]![f])).toFixed(2)}x`);
for (const d of daemons) d.child.kill('SIGTERM');
await Promise.all(daemons.map((d) => new Promise((r) => d.child.once('exit', r))));

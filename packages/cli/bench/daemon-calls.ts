// Tool calls through the real daemon's HTTP API (the `aalis serve` binary of this checkout), in
// the same run, interleaved rounds, medians:
// 1. `list_dir` with 100,000 known conversations against the baseline of one (sessions index), the
//    index's own cost per call, and the event-loop stall of its compaction (100,000 against one);
// 2. throughput of `run_command true` (network off): sequential calls/s, and 8 concurrent clients
//    against that sequential baseline, each also measured on a daemon with `AALIS_PREPARE=off` (no
//    sandbox prepared ahead) in interleaved rounds, as the baseline of the prepared sandboxes; the daemon's own cost per call (each answer's Server-Timing:
//    the call less its sandbox run, as the daemon timed both); the worst `/healthz` answer meanwhile
//    (the event loop held by one call's synchronous work shows there, whatever the others wait on),
//    with the daemon's own event-loop delay over the same window (max and p99, `/api/status/event-loop`);
// 2b. the sandboxes' CPU share (sandbox-linux `cpuShare`): the same 8 clients on the daemon as
//    shipped against one with `AALIS_CPU_SHARE=off` (each sandbox its own autogroup, as before), in
//    interleaved rounds (ABBA): per window the worst `/healthz` answer, the daemon's loop's longest
//    stall and its own part, its thread's wait for a CPU, and calls/s; medians over the rounds;
// 3. a long command (`sleep`, 20 s) in a 1,000,000-file workspace: the worst `/healthz` answer
//    meanwhile (polled every 20 ms from another process) against the same poll of the idle daemon,
//    and the daemon's CPU over the command (every thread, /proc) less what answering the poll costs.
// Arguments: known conversations, rounds, calls, files of the long command's workspace, its seconds.
// BENCH_SOURCE=1: the daemons run from source instead of the built CLI.
// BENCH_QUICK=1: 10,000 conversations, 10 rounds, 24 calls, 20,000 files, 3 s (a check that it
// runs, not the figures of the issue).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from '../src/daemon/serve-process.testing.js';
import { SessionIndex } from '../src/daemon/session-index.js';
import { sessionTmpOf } from '@aalis/plugin-reach';
import { recordFigure, recordSkipped } from '../../../test/bench/record-figure.js';
import { benchTree } from './bench-tree.js';
import { type CpuSnapshot, cpuPerCall, cpuSnapshot } from './call-cpu.js';
import { pollHealth } from './health-poll.js';
import { median } from '../../../test/bench/median.js';

const QUICK = process.env.BENCH_QUICK === '1';
const KNOWN = Number(process.argv[2] ?? (QUICK ? 10_000 : 100_000));
const ROUNDS = Number(process.argv[3] ?? (QUICK ? 10 : 30));
const CALLS = Number(process.argv[4] ?? (QUICK ? 24 : 60));
const LONG_FILES = Number(process.argv[5] ?? (QUICK ? 20_000 : 1_000_000));
const LONG_S = Number(process.argv[6] ?? (QUICK ? 3 : 20));

/**
 * A deployment whose daemon has seen `count` conversations before it starts: each in the
 * conversation index, and each with its session temp, as a tool call of it leaves one
 * (plugin-reach's sessionTmpOf).
 */
function deploymentWith(count: number): string {
  const dir = deploymentDir({ owners: { chat: ['alice'] } });
  mkdirSync(join(dir, 'data', 'daemon'), { recursive: true, mode: 0o700 });
  const at = new Date().toISOString();
  const sessions = Array.from({ length: count }, (_, i) => ({ id: `chat-${i}`, platform: 'chat', firstSeen: at, lastSeen: at }));
  writeFileSync(join(dir, 'data', 'daemon', 'sessions.json'), JSON.stringify({ v: 1, sessions }), { mode: 0o600 });
  for (const { id } of sessions) mkdirSync(sessionTmpOf(join(dir, 'data', 'tmp'), id), { recursive: true, mode: 0o700 });
  return dir;
}

/** The phases of the last answers' `Server-Timing` (call-timing.ts), per call, in ms. */
const phases: { total: number; sandbox: number; index: number }[] = [];

async function call(daemon: ServeProcess, tool: string, params: unknown, session: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${daemon.url}/api/tools/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool, params, turn: ownerTurn(session) }),
  });
  const body = (await res.json()) as { ok?: boolean };
  if (res.status !== 200 || body.ok !== true) throw new Error(`${tool} failed: ${JSON.stringify(body).slice(0, 400)}`);
  const took = performance.now() - start;
  const timing = Object.fromEntries([...(res.headers.get('server-timing') ?? '').matchAll(/(\w+);dur=([\d.]+)/g)].map((m) => [m[1]!, Number(m[2])]));
  if (timing.total !== undefined) phases.push({ total: timing.total, sandbox: timing.sandbox ?? 0, index: timing.index ?? 0 });
  return took;
}

/** The daemon's own cost per call over the calls since `from` (Server-Timing: total less the sandbox's runs). */
function ownCost(from: number): string {
  const window = phases.slice(from);
  if (window.length === 0) return "no Server-Timing in the answers (a daemon from before it): the daemon's own cost is not known";
  const own = median(window.map((p) => p.total - p.sandbox));
  return `the daemon's own per call (its answers' Server-Timing, total less the sandbox's run): median ${own.toFixed(1)} ms of ${median(window.map((p) => p.total)).toFixed(1)} ms in the daemon; the sandbox's run ${median(window.map((p) => p.sandbox)).toFixed(1)} ms; waiting for the conversation index ${median(window.map((p) => p.index)).toFixed(2)} ms`;
}

// The large workspace is made (or found) before the daemons start: making it blocks this process
// for a while (18 s for a million files), and a keep-alive socket the daemon closed meanwhile would
// be reused by the next fetch before this process saw its end ("other side closed").
const longWorkspace = LONG_S > 0 ? benchTree(LONG_FILES) : undefined;
const dirs = [deploymentWith(1), deploymentWith(KNOWN), deploymentWith(1), deploymentWith(1)];
// The daemon as people run it: the built CLI, through scripts/checkout.mjs, which builds it first
// when a source is newer (as `pnpm aalis` does). From source (BENCH_SOURCE=1) it carries the
// TypeScript loader's threads and about twice the memory, and every fork it makes per command
// costs with its size. The built code resolves @aalis/* to dist/, so not with the source condition.
const FROM_SOURCE = process.env.BENCH_SOURCE === '1';
const withoutSource = (process.env.NODE_OPTIONS ?? '').replace(/--conditions[= ]aalis-source/g, '').trim();
const daemonEnv = { NODE_OPTIONS: FROM_SOURCE ? `${withoutSource} --conditions=aalis-source`.trim() : withoutSource };
const bin = FROM_SOURCE ? undefined : fileURLToPath(new URL('../scripts/checkout.mjs', import.meta.url));
// built once here, before the two daemons start (each would otherwise find the sources newer)
if (bin !== undefined && spawnSync(process.execPath, [bin, '--version'], { env: { ...process.env, ...daemonEnv }, stdio: ['ignore', 'ignore', 'inherit'] }).status !== 0) throw new Error('the CLI did not build; see above');
// the third: the baseline of the prepared sandboxes (sandbox-linux `prepare`), which it does not prepare
// the fourth: the baseline of the sandboxes' CPU share, whose sandboxes compete with it as equals
const envOf = (i: number) => (i === 2 ? { ...daemonEnv, AALIS_PREPARE: 'off' } : i === 3 ? { ...daemonEnv, AALIS_CPU_SHARE: 'off' } : daemonEnv);
const [one, many, unprepared, unshared] = await Promise.all(dirs.map((d, i) => startServe(d, [], envOf(i), bin)));
console.log(`the daemons run ${FROM_SOURCE ? 'from source (the TypeScript loader)' : 'the built CLI (scripts/checkout.mjs)'}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
if (!one || !many || !unprepared || !unshared) throw new Error('a daemon did not start');
/**
 * `fn` on the daemon with one known conversation and on the one with many, once each a round, in
 * ABBA order so neither always goes first; rounds below 0 warm up. The medians of each side.
 */
const interleaved = async (warmup: number, fn: (daemon: ServeProcess, round: number) => Promise<number>): Promise<{ one: number; many: number }> => {
  const times = { one: [] as number[], many: [] as number[] };
  for (let round = -warmup; round < ROUNDS; round++) {
    const first = round % 2 === 0 ? one : many;
    const second = first === one ? many : one;
    const x = await fn(first, round);
    const y = await fn(second, round);
    const [a, b] = first === one ? [x, y] : [y, x];
    if (round < 0) continue;
    times.one.push(a);
    times.many.push(b);
  }
  return { one: median(times.one), many: median(times.many) };
};

try {
  // 1. The conversation index: the same known conversation on both sides (the index notes it at
  // every call); only the number of other conversations the daemon knows differs.
  const { one: m1, many: mN } = await interleaved(5, (d) => call(d, 'list_dir', { path: '.' }, 'chat-0'));
  console.log(`list_dir through the daemon, ${ROUNDS} interleaved rounds, medians: ${KNOWN} known conversations ${mN.toFixed(1)} ms; baseline 1 known conversation ${m1.toFixed(1)} ms; ratio ${(mN / m1).toFixed(2)}x (target 1.2x)`);
  recordFigure({ id: 'cli.list-dir-conversations', what: `\`list_dir\` through the daemon's HTTP API with ${KNOWN} known conversations`, candidate: mN, baseline: { what: 'one known conversation', value: m1 }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });

  // 1a. run_command with the same conversations: each has its session temp in the data directory,
  // whose listing every run's scan made (725 ms a call at 100,000, against 26).
  if (CALLS > 0) {
    const { one: r1, many: rN } = await interleaved(5, (d) => call(d, 'run_command', { command: 'true', network: 'off' }, 'chat-0'));
    console.log(`run_command true through the daemon, ${ROUNDS} interleaved rounds, medians: ${KNOWN} known conversations with their session temps ${rN.toFixed(1)} ms; baseline 1 ${r1.toFixed(1)} ms; ratio ${(rN / r1).toFixed(2)}x (target 1.2x)`);
    recordFigure({ id: 'cli.run-command-conversations', what: `\`run_command true\` through the daemon's HTTP API with ${KNOWN} known conversations, each with its session temp`, candidate: rN, baseline: { what: 'one known conversation', value: r1 }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });
    // each call from a conversation never seen before: its session temp is made, so the data
    // directory's listings change under every run (the scan lists them again)
    const { one: f1, many: fN } = await interleaved(2, (d, round) => call(d, 'run_command', { command: 'true', network: 'off' }, `new-${round}`));
    console.log(`run_command true, each call a new conversation, ${ROUNDS} interleaved rounds, medians: ${KNOWN} known conversations ${fN.toFixed(1)} ms; baseline 1 ${f1.toFixed(1)} ms; ratio ${(fN / f1).toFixed(2)}x`);
    recordFigure({ id: 'cli.run-command-new-conversations', what: `\`run_command true\` from a new conversation at each call, with ${KNOWN} known conversations (their session temps)`, candidate: fN, baseline: { what: 'one known conversation', value: f1 }, unit: 'ms', rounds: ROUNDS });
  }

  // 1a'. The conversations' listing (the console's, an adapter's): a page, whose cost is its own
  // conversations', not the index's; a page of one on each side, so only the index's size differs.
  const list = async (daemon: ServeProcess, query: string): Promise<number> => {
    const start = performance.now();
    const r = await daemon.api('GET', `/api/sessions${query}`);
    if (r.status !== 200) throw new Error(`GET /api/sessions failed: ${JSON.stringify(r.body).slice(0, 400)}`);
    return performance.now() - start;
  };
  const { one: l1, many: lN } = await interleaved(5, (d) => list(d, '?limit=1'));
  // the default page, one after another once each listed conversation was read in (its first listing reads its file)
  await list(many, '');
  const pages: number[] = [];
  for (let i = 0; i < 5; i++) pages.push(await list(many, ''));
  const pageN = median(pages);
  console.log(`GET /api/sessions?limit=1 through the daemon, ${ROUNDS} interleaved rounds, medians: ${KNOWN} known conversations ${lN.toFixed(2)} ms; baseline 1 known conversation ${l1.toFixed(2)} ms; ratio ${(lN / l1).toFixed(2)}x (target 1.2x); the default page of 200 with ${KNOWN}: ${pageN.toFixed(1)} ms`);
  recordFigure({ id: 'cli.sessions-list-conversations', what: `\`GET /api/sessions\` (a page of one) with ${KNOWN} known conversations; the default page of 200: ${pageN.toFixed(1)} ms`, candidate: lN, baseline: { what: 'one known conversation', value: l1 }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.2 }, rounds: ROUNDS });

  // 1b. The same in one process: the index's own cost per call, without HTTP and the tool.
  const indexDirs = [mkdtempSync(join(tmpdir(), 'aalis-index-1-')), mkdtempSync(join(tmpdir(), 'aalis-index-n-'))];
  const [small, large] = await Promise.all(
    indexDirs.map(async (dir, i) => {
      const at = new Date().toISOString();
      const sessions = Array.from({ length: i === 0 ? 1 : KNOWN }, (_, k) => ({ id: `chat-${k}`, platform: 'chat', firstSeen: at, lastSeen: at }));
      writeFileSync(join(dir, 'sessions.json'), JSON.stringify({ v: 1, sessions }), { mode: 0o600 });
      return SessionIndex.open(dir);
    }),
  );
  const seen = { one: [] as number[], many: [] as number[] };
  for (let round = -5; round < ROUNDS * 5; round++) {
    for (const [index, key] of (round % 2 === 0 ? [[small, 'one'], [large, 'many']] : [[large, 'many'], [small, 'one']]) as [SessionIndex, 'one' | 'many'][]) {
      const start = performance.now();
      await index.seen('chat-0', 'chat');
      if (round >= 0) seen[key].push(performance.now() - start);
    }
  }
  for (const dir of indexDirs) rmSync(dir, { recursive: true, force: true });
  const s1 = median(seen.one);
  const sN = median(seen.many);
  console.log(`the conversation index alone (seen, fsync'd), ${ROUNDS * 5} interleaved rounds, medians: ${KNOWN} conversations ${sN.toFixed(2)} ms; baseline 1 conversation ${s1.toFixed(2)} ms; ratio ${(sN / s1).toFixed(2)}x`);
  recordFigure({ id: 'cli.session-index-conversations', what: `the conversation index alone (\`seen\`, fsync'd) with ${KNOWN} conversations`, candidate: sN, baseline: { what: 'one conversation', value: s1 }, unit: 'ms', rounds: ROUNDS * 5 });

  // 1c. The index's compaction (the snapshot rewritten once the journal outgrows it): the longest
  // stall of this thread's event loop meanwhile, with KNOWN conversations against one.
  const stalls: number[] = [];
  for (const count of [1, KNOWN]) {
    const dir = mkdtempSync(join(tmpdir(), 'aalis-index-c-'));
    const at = new Date().toISOString();
    const sessions = Array.from({ length: count }, (_, k) => ({ id: `chat-${k}`, platform: 'chat', firstSeen: at, lastSeen: at }));
    writeFileSync(join(dir, 'sessions.json'), JSON.stringify({ v: 1, sessions }), { mode: 0o600 });
    writeFileSync(join(dir, 'sessions-journal.jsonl'), sessions.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 }); // as long as the index: the next call compacts
    const index = await SessionIndex.open(dir);
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    await index.seen('chat-0', 'chat');
    await index.seen('chat-0', 'chat'); // written behind the compaction
    loop.disable();
    stalls.push(loop.max / 1e6);
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`the conversation index's compaction (its snapshot rewritten): ${KNOWN} conversations, longest event-loop stall ${stalls[1]!.toFixed(1)} ms (target <= 50 ms); baseline 1 conversation ${stalls[0]!.toFixed(1)} ms; ratio ${(stalls[1]! / stalls[0]!).toFixed(2)}x`);
  recordFigure({ id: 'cli.session-index-compaction-stall', what: `the event loop's longest stall while the index of ${KNOWN} conversations compacts`, candidate: stalls[1]!, baseline: { what: 'one conversation', value: stalls[0]! }, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: 1 });

  // 2. Throughput of run_command true, network off: the daemon as shipped (sandboxes prepared
  // ahead) against one with AALIS_PREPARE=off, in interleaved rounds (ABBA), so both see the same load.
  if (CALLS > 0) {
    const run = (daemon: ServeProcess, client: number, i: number) => call(daemon, 'run_command', { command: 'true', network: 'off' }, `chat-t${client}-${i % 4}`);
    // Every conversation the clients use is known before either measure: a conversation's first
    // call also writes its session and index entry and resolves its reach (printed apart below),
    // which the concurrent clients would otherwise pay 28 times and the sequential client 4.
    let from = phases.length;
    for (const daemon of [one, unprepared, unshared]) for (let client = 0; client < 8; client++) for (let k = 0; k < 4; k++) await run(daemon, client, k);
    const firstCalls = ownCost(from);
    const TROUNDS = QUICK ? 2 : 4;
    const perRound = Math.max(8, Math.floor(CALLS / TROUNDS));
    const seq = { on: [] as number[], off: [] as number[] };
    const seqOwn: { on: string[]; off: string[] } = { on: [], off: [] };
    // the daemons' CPU over their sequential rounds (the clients' windows apart), from /proc
    const seqCpu = { on: { calls: 0, spent: [] as [CpuSnapshot, CpuSnapshot][] }, off: { calls: 0, spent: [] as [CpuSnapshot, CpuSnapshot][] } };
    const sequentialOn = async (daemon: ServeProcess) => {
      from = phases.length;
      const cpuBefore = cpuSnapshot(daemon.child.pid!);
      const start = performance.now();
      for (let i = 0; i < perRound; i++) await run(daemon, 0, i);
      const rate = perRound / ((performance.now() - start) / 1000);
      return { rate, own: ownCost(from), cpu: [cpuBefore, cpuSnapshot(daemon.child.pid!)] as [CpuSnapshot, CpuSnapshot] };
    };
    for (let round = 0; round < TROUNDS; round++) {
      for (const side of round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const r = await sequentialOn(side === 'on' ? one : unprepared);
        seq[side].push(r.rate);
        seqOwn[side].push(r.own);
        seqCpu[side].calls += perRound;
        seqCpu[side].spent.push(r.cpu);
      }
    }
    const sequential = median(seq.on);
    const sequentialOff = median(seq.off);
    const clients = async (daemon: ServeProcess) => {
      const start = performance.now();
      await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          for (let i = 0; i < CALLS / 8; i++) await run(daemon, client, i);
        }),
      );
      return (8 * Math.floor(CALLS / 8)) / ((performance.now() - start) / 1000);
    };
    type Loop = { maxMs: number; p99Ms: number; resolutionMs: number; ownMaxMs?: number | null; cpuWaitMs?: number | null };
    // the 8 clients, with the daemon's own loop over their window only, and /healthz polled from a
    // process of its own (a poll in this one waited for the 8 clients' own work here)
    const clientsWindow = async (daemon: ServeProcess) => {
      await daemon.api('POST', '/api/status/event-loop');
      let rate = 0;
      let loop: Loop = { maxMs: 0, p99Ms: 0, resolutionMs: 0 };
      const { whole: health } = await pollHealth(daemon, 0, async () => {
        rate = await clients(daemon);
        loop = (await daemon.api('GET', '/api/status/event-loop')).body as Loop;
      });
      return { rate, loop, health };
    };
    // the baseline's 8 clients before and after the measured ones (off, on, off), the median of its two
    const offRuns = [await clients(unprepared)];
    from = phases.length;
    const { rate: concurrent, loop, health } = await clientsWindow(one);
    offRuns.push(await clients(unprepared));
    const concurrentOff = (offRuns[0]! + offRuns[1]!) / 2;
    const rates = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(', ');
    console.log(`run_command true (network off) through the daemon: sequential ${sequential.toFixed(1)} calls/s (target 60); 8 concurrent clients ${concurrent.toFixed(1)} calls/s, ratio ${(concurrent / sequential).toFixed(2)}x the sequential baseline (target 1.5x)`);
    console.log(`  prepared sandboxes off (AALIS_PREPARE=off), the baseline: sequential ${sequentialOff.toFixed(1)} calls/s (on/off ${(sequential / sequentialOff).toFixed(2)}x), 8 clients ${concurrentOff.toFixed(1)} calls/s (mean of ${offRuns.map((x) => x.toFixed(1)).join(' before and ')} after; on/off ${(concurrent / concurrentOff).toFixed(2)}x)`);
    console.log(`  sequential, ${TROUNDS} interleaved rounds of ${perRound} calls (calls/s): on ${rates(seq.on)}; off ${rates(seq.off)}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`  a conversation's first call (32 per daemon, sequential, before the measures): ${firstCalls}`);
    console.log(`  sequential, prepared on, last round: ${seqOwn.on.at(-1)}`);
    console.log(`  sequential, prepared off, last round: ${seqOwn.off.at(-1)}`);
    const sumCpu = (side: 'on' | 'off', at: 0 | 1): CpuSnapshot => {
      const xs = seqCpu[side].spent.map((pair) => pair[at]);
      return { main: xs.reduce((a, x) => a + x.main, 0), threads: xs.reduce((a, x) => a + x.threads, 0), children: xs.reduce((a, x) => a + x.children, 0) };
    };
    console.log(`  sequential, prepared on: ${cpuPerCall(sumCpu('on', 0), sumCpu('on', 1), seqCpu.on.calls)}`);
    console.log(`  sequential, prepared off: ${cpuPerCall(sumCpu('off', 0), sumCpu('off', 1), seqCpu.off.calls)}`);
    console.log(`  8 clients: ${ownCost(from)}`);
    console.log(`/healthz while the 8 clients ran (polled every 20 ms from another process): ${health.answers} answers, median ${health.median.toFixed(1)} ms, worst ${health.worst.toFixed(1)} ms (target: the event loop never blocks longer than 50 ms)`);
    console.log(`  the daemon's event loop meanwhile (monitorEventLoopDelay in the daemon, every ${loop.resolutionMs} ms): longest stall ${loop.maxMs.toFixed(1)} ms, p99 ${loop.p99Ms.toFixed(1)} ms; ratio ${(loop.maxMs / 50).toFixed(2)}x the 50 ms target`);
    if (typeof loop.ownMaxMs === 'number' && typeof loop.cpuWaitMs === 'number') {
      console.log(`  of which the daemon's own (each stall less the thread's wait for a CPU others held, Linux schedstat): longest ${loop.ownMaxMs.toFixed(1)} ms, ratio ${(loop.ownMaxMs / 50).toFixed(2)}x the 50 ms target; the thread waited ${loop.cpuWaitMs.toFixed(0)} ms for a CPU over the window`);
    }
    recordFigure({ id: 'cli.run-command-sequential', what: 'sequential `run_command true` (network off) through the HTTP API, built daemon, sandboxes prepared ahead', candidate: sequential, baseline: { what: 'the same with AALIS_PREPARE=off, interleaved rounds', value: sequentialOff }, unit: 'calls/s', target: { on: 'value', op: '>=', limit: 60 }, rounds: TROUNDS * perRound });
    recordFigure({ id: 'cli.run-command-clients', what: '8 concurrent clients of `run_command true`', candidate: concurrent, baseline: { what: 'sequential, same daemon', value: sequential }, unit: 'calls/s', target: { on: 'ratio', op: '>=', limit: 1.5 }, rounds: 8 * Math.floor(CALLS / 8), note: `prepared off: ${concurrentOff.toFixed(1)} calls/s` });
    recordFigure({ id: 'cli.healthz-clients', what: '`/healthz` worst answer while the 8 clients ran', candidate: health.worst, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: health.answers, note: `median ${health.median.toFixed(1)} ms, polled from another process` });
    recordFigure({ id: 'cli.event-loop-stall-clients', what: "the daemon's own longest event-loop stall while the 8 clients ran (`/api/status/event-loop`)", candidate: loop.maxMs, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: 8 * Math.floor(CALLS / 8), note: `p99 ${loop.p99Ms.toFixed(1)} ms` });

    // 2b. The sandboxes' CPU share: the shipped daemon against AALIS_CPU_SHARE=off, interleaved (ABBA).
    type Window = { rate: number; worst: number; stall: number; own: number | null; cpuWait: number | null };
    const windowOf = async (daemon: ServeProcess): Promise<Window> => {
      const { rate, loop: l, health } = await clientsWindow(daemon);
      return { rate, worst: health.worst, stall: l.maxMs, own: typeof l.ownMaxMs === 'number' ? l.ownMaxMs : null, cpuWait: typeof l.cpuWaitMs === 'number' ? l.cpuWaitMs : null };
    };
    const SROUNDS = QUICK ? 4 : 6;
    const shareWin: { on: Window[]; off: Window[] } = { on: [], off: [] };
    for (let round = 0; round < SROUNDS; round++) {
      for (const side of round % 4 === 0 || round % 4 === 3 ? (['on', 'off'] as const) : (['off', 'on'] as const)) shareWin[side].push(await windowOf(side === 'on' ? one : unshared));
    }
    const med = (side: 'on' | 'off', k: keyof Window) => median(shareWin[side].map((w) => w[k] ?? Number.NaN));
    const fmt = (side: 'on' | 'off') => `/healthz worst ${med(side, 'worst').toFixed(1)} ms, loop stall ${med(side, 'stall').toFixed(1)} ms (its own ${med(side, 'own').toFixed(1)} ms), thread's wait for a CPU ${med(side, 'cpuWait').toFixed(0)} ms, ${med(side, 'rate').toFixed(1)} calls/s`;
    console.log(`the sandboxes' CPU share, 8 clients, ${SROUNDS} interleaved rounds of ${8 * Math.floor(CALLS / 8)} calls, medians: share on ${fmt('on')}; baseline AALIS_CPU_SHARE=off ${fmt('off')}; /healthz worst on/off ${(med('on', 'worst') / med('off', 'worst')).toFixed(2)}x, loop stall on/off ${(med('on', 'stall') / med('off', 'stall')).toFixed(2)}x; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const perRoundText = (side: 'on' | 'off') => shareWin[side].map((w) => `${w.worst.toFixed(0)}/${w.stall.toFixed(0)}/${w.cpuWait?.toFixed(0) ?? '?'}/${w.rate.toFixed(1)}`).join(', ');
    console.log(`  per round (/healthz worst ms / loop stall ms / CPU wait ms / calls/s): on ${perRoundText('on')}; off ${perRoundText('off')}`);
    recordFigure({ id: 'cli.cpu-share-healthz', what: "`/healthz` worst answer while 8 clients run `run_command true`, the sandboxes in the daemon's one cpu cgroup (median of the rounds' worst)", candidate: med('on', 'worst'), baseline: { what: 'AALIS_CPU_SHARE=off, interleaved rounds', value: med('off', 'worst') }, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: SROUNDS });
    recordFigure({ id: 'cli.cpu-share-loop-stall', what: "the daemon's event loop's longest stall in the same windows (median of the rounds')", candidate: med('on', 'stall'), baseline: { what: 'AALIS_CPU_SHARE=off, interleaved rounds', value: med('off', 'stall') }, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: SROUNDS, note: `calls/s on ${med('on', 'rate').toFixed(1)}, off ${med('off', 'rate').toFixed(1)}` });
  }

  // 3. A long command in a large workspace: what the daemon does while it waits.
  if (longWorkspace !== undefined) {
    const ws = longWorkspace;
    const long = (command: string) => call(one, 'run_command', { command, cwd: ws, network: 'off', timeoutMs: 30 * 60_000 }, 'chat-long');
    const t = performance.now();
    await long('true'); // the first scan of the tree, and the listings the daemon keeps
    console.log(`a first \`true\` in the ${LONG_FILES}-file workspace (its first scan): ${(performance.now() - t).toFixed(0)} ms`);
    const { whole: idle } = await pollHealth(one, 5_000, async () => {});
    const idleRate = idle.cpuMs / idle.wallMs;
    // the command's own argv names it, so its window is known: `sh -c 'sleep N; true' <marker>` (not exec'd away)
    const marker = `aalis-bench-long-${process.pid}`;
    const { whole, during } = await pollHealth(one, LONG_S * 1000, () => long(`sh -c 'sleep ${LONG_S}; true' ${marker}`), marker);
    const share = (w: typeof whole) => `${((100 * Math.max(0, w.cpuMs - idleRate * w.wallMs)) / w.wallMs).toFixed(2)}% of a core`;
    if (during) {
      console.log(`/healthz while a ${LONG_S} s command ran in a ${LONG_FILES}-file workspace: worst ${during.worst.toFixed(1)} ms of ${during.answers} (target <= 50 ms); baseline the idle daemon, worst ${idle.worst.toFixed(1)} ms of ${idle.answers}; ratio ${(during.worst / idle.worst).toFixed(2)}x`);
      console.log(`  daemon host side meanwhile (its CPU less what answering the poll costs idle, ${(100 * idleRate).toFixed(2)}% of a core): ${share(during)} over ${during.wallMs.toFixed(0)} ms (target < 2%)`);
      recordFigure({ id: 'cli.healthz-long-command', what: `the daemon's \`/healthz\` worst answer while a ${LONG_S} s command runs in a ${LONG_FILES}-file workspace`, candidate: during.worst, baseline: { what: 'the idle daemon', value: idle.worst }, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: during.answers });
      recordFigure({ id: 'cli.host-cpu-long-command', what: "the daemon's host side while that command runs (its CPU less what answering the poll costs idle)", candidate: (100 * Math.max(0, during.cpuMs - idleRate * during.wallMs)) / during.wallMs, unit: '%', target: { on: 'value', op: '<', limit: 2 }, rounds: 1, note: `% of a core: its whole CPU ${((100 * during.cpuMs) / during.wallMs).toFixed(2)}%, answering the poll idle ${(100 * idleRate).toFixed(2)}% (0 when the first is below the second)` });
    } else {
      console.log('the long command was not seen running: no figure for the window while it ran');
      recordSkipped(['cli.healthz-long-command', 'cli.host-cpu-long-command'], 'the long command was not seen running (its marker never showed in the process list)');
    }
    console.log(`  the whole call (scan before, commit after): ${whole.wallMs.toFixed(0)} ms, /healthz worst ${whole.worst.toFixed(1)} ms of ${whole.answers}, host side ${share(whole)}`);
  }
} finally {
  await Promise.all([one.stop(), many.stop(), unprepared.stop(), unshared.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

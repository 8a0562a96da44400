/*
 * Part of `pnpm bench` (alone: `pnpm --filter @aalis/sandbox-linux bench:host`): what the host model
 * costs for the size of the workspace (issue 13). Trees are made once under /var/tmp/aalis-bench/
 * (BENCH_DIR; the shallow ones are shared with cli's bench/daemon-calls.ts) and kept:
 *   small    1,000 files;
 *   shallow  1,000,000 files, 1,000 directories of 1,000;
 *   deep     1,000,000 files, 8 levels of 4 directories with 15 files in each leaf;
 * BENCH_QUICK=1: 20,000 files instead of 1,000,000, 2 rounds, a 3 s command (a check that it runs).
 * a quarter of each under node_modules. Per round, interleaved: `true` in each workspace through
 * LinuxSandbox.run (scan, mounts, look after the run), with the longest event-loop stall seen while
 * it ran (the first round, which fills the listings kept between walks, is not counted), each
 * 1M tree's ratio to the 1,000-file one measured in the same rounds, and the memory the host model
 * keeps for each tree (the host thread's heap after a full collection, measured as the warm-up
 * round adds each tree). Then a long command (`sleep`, BENCH_LONG_S seconds, default 20; 0 skips
 * it) in each 1M tree with the looks while it runs: the daemon process's CPU time over the run
 * (process.cpuUsage, every thread), the worst answer time of a real `/healthz` HTTP endpoint
 * polled every 20 ms from another process, and the longest event-loop stall. Then one scan of
 * each 1M tree on this thread, cold and warm, against a bare readdir walk, and the walk of this
 * machine's home to the depth the scan uses.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ENV_FILES, GIT_LANDINGS, PROJECT_LANDINGS, type SandboxPolicy } from '@aalis/api-reach';
import { walkTree } from '../src/host-walk.js';
import { createLinuxSandbox, HOME_DEPTH, scanHost } from '../src/index.js';
import { recordFigure } from '../../../test/bench/record-figure.js';

const DIR = process.env.BENCH_DIR ?? '/var/tmp/aalis-bench';
const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 2 : 21));
/** Files of the large trees. */
const LARGE = Number(process.env.BENCH_LARGE ?? (QUICK ? 20_000 : 1_000_000));
const MAKE = `
import os, sys
root, shape, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def fill(base, count, deep):
    made = 0
    if not deep:
        per = 1000 if count >= 1000 else count
        d = 0
        while made < count:
            p = os.path.join(base, 'd%d' % d); os.makedirs(p, exist_ok=True)
            for i in range(min(per, count - made)):
                os.close(os.open(os.path.join(p, 'f%d.txt' % i), os.O_CREAT | os.O_WRONLY)); made += 1
            d += 1
        return
    leaf = 0
    while made < count:
        x, parts = leaf, []
        for _ in range(8): parts.append('l%d' % (x % 4)); x //= 4
        p = os.path.join(base, *parts, 'x%d' % (leaf // 65536)); os.makedirs(p, exist_ok=True)
        for i in range(min(15, count - made)):
            os.close(os.open(os.path.join(p, 'f%d.txt' % i), os.O_CREAT | os.O_WRONLY)); made += 1
        leaf += 1
os.makedirs(root, exist_ok=True)
fill(os.path.join(root, 'src'), n * 3 // 4, shape == 'deep')
fill(os.path.join(root, 'node_modules'), n - n * 3 // 4, shape == 'deep')
open(os.path.join(root, '.ready'), 'w').close()
`;

function tree(name: string, shape: 'shallow' | 'deep', files: number): string {
  const root = join(DIR, `ws-${name}`);
  if (!existsSync(join(root, '.ready'))) {
    const t = performance.now();
    execFileSync('python3', ['-c', MAKE, root, shape, String(files)]);
    console.log(`made ${name} (${files} files) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  return root;
}

const home = join(DIR, 'home');
const data = join(DIR, 'data');
const sessionTmp = join(data, 'tmp', 'session-1');
for (const d of [home, join(data, 'run'), sessionTmp]) mkdirSync(d, { recursive: true });
writeFileSync(join(data, 'run', 'state.json'), '{}\n');
const policyOf = (ws: string): SandboxPolicy => ({
  readDeny: [ENV_FILES, { path: join(home, '.ssh') }, { path: join(data, 'tmp') }],
  readAllowWithin: [sessionTmp],
  write: [ws, sessionTmp],
  writeDeny: [...GIT_LANDINGS, ...PROJECT_LANDINGS, ENV_FILES],
  writeExceptions: [{ path: join(ws, 'node_modules') }],
  controlDeny: [{ path: join(data, 'run') }],
  network: 'off',
  localPorts: [],
  unixSockets: [ws, sessionTmp],
});
const workspaces = { small: tree('shallow-1000', 'shallow', 1_000), shallow: tree(`shallow-${LARGE}`, 'shallow', LARGE), deep: tree(`deep-${LARGE}`, 'deep', LARGE) };
const large = LARGE >= 1_000_000 ? `${LARGE / 1_000_000}M` : `${LARGE / 1000}k`;
// one service for everything, with its default looks while a command runs: a second one would keep a second index
const sb = createLinuxSandbox({ scan: { home } });
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C' };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const MB = (n: number) => `${(n / 1e6).toFixed(0)} MB`;
const heap: Record<string, number> = {};
let heapBefore = (await sb.hostMemory()).heapUsed;
const times: Record<string, number[]> = { small: [], shallow: [], deep: [] };
const stalls: Record<string, number[]> = { small: [], shallow: [], deep: [] };
// warm-up rounds (not counted) until the index trusts both 1M trees and has answered a scan of each
// (the first walk of a tree asks for its watch, the next one after that is in place fills the memo)
let warm = 0;
for (let round = 0; round <= ROUNDS; round++) {
  if (round === 1 && warm < 6) {
    const m = await sb.hostMemory();
    if (m.indexedTrees < 2 || m.reusedSubtrees < 4) {
      warm += 1;
      round = 0;
    }
  }
  // the order turns each round: run always after the deep tree's, the small tree paid for what the
  // deep run left behind (its commit, its listings' upkeep) and read slower than the 1M trees
  const order = Object.entries(workspaces);
  for (const [name, ws] of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const t = performance.now();
    const r = await sb.run({ argv: ['true'], cwd: ws, env, timeoutMs: 600_000, policy: policyOf(ws) });
    const took = performance.now() - t;
    h.disable();
    if (r.exitCode !== 0) throw new Error(`true failed in ${name}: ${r.stderr}`);
    if (round === 0) {
      // warm-up: page cache, the worker thread, and the listings kept for this tree, whose memory is this
      if (warm > 0) continue;
      const m = await sb.hostMemory();
      heap[name] = m.heapUsed - heapBefore;
      heapBefore = m.heapUsed;
      continue;
    }
    times[name]!.push(took);
    stalls[name]!.push(h.max / 1e6);
  }
}
const ms = (x: number) => `${x.toFixed(0)} ms`;
console.log(`\n\`true\` through LinuxSandbox.run, median of ${ROUNDS} interleaved rounds (longest event-loop stall while it ran):`);
for (const name of Object.keys(times)) console.log(`  ${name.padEnd(8)} ${ms(median(times[name]!)).padStart(9)}   stall ${ms(Math.max(...stalls[name]!))}`);
console.log(`  ratio ${large} shallow / 1k: ${(median(times.shallow!) / median(times.small!)).toFixed(2)}x   ${large} deep / 1k: ${(median(times.deep!) / median(times.small!)).toFixed(2)}x   (target <= 1.25x)`);
for (const name of ['shallow', 'deep'] as const) recordFigure({ id: `sandbox-linux.true-large-${name}`, what: `\`true\` through \`LinuxSandbox.run\` in a ${large}-file ${name} workspace (a quarter under node_modules)`, candidate: median(times[name]!), baseline: { what: '1,000 files', value: median(times.small!) }, unit: 'ms', target: { on: 'ratio', op: '<=', limit: 1.25 }, rounds: ROUNDS });
const mem = await sb.hostMemory();
console.log(`(after ${warm + 1} warm-up rounds; index: ${mem.indexedTrees} trees trusted, ${mem.reusedSubtrees} subtrees answered from the memo)`);
console.log(`memory the host model keeps (host thread heap after a full GC): small ${MB(heap.small!)}, ${large} shallow ${MB(heap.shallow!)}, ${large} deep ${MB(heap.deep!)} (target < 200 MB each); all three: ${MB(mem.heapUsed)}, ${mem.keptDirectories} directories; process RSS ${MB(process.memoryUsage().rss)}`);
for (const name of ['shallow', 'deep'] as const) recordFigure({ id: `sandbox-linux.host-model-memory-${name}`, what: `memory the host model keeps for a ${large}-file ${name} workspace (host thread heap after a full GC)`, candidate: heap[name]! / 1e6, unit: 'MB', target: { on: 'value', op: '<', limit: 200 }, rounds: 1 });

const LONG_S = Number(process.env.BENCH_LONG_S ?? (QUICK ? 3 : 20));
if (LONG_S > 0) {
  const server = createServer((_, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  // the poller is another process, so its own timing is not stalled by what it measures; its first
  // fetch is not counted: a fresh Node process's first fetch loads and compiles its HTTP client
  // (77 to 94 ms measured against an idle server), which read as the daemon's worst answer
  const POLL = `
const url = 'http://127.0.0.1:' + process.argv[1] + '/healthz';
let worst = 0, n = 0, stop = false;
process.stdin.on('data', () => { stop = true; }); process.stdin.resume();
(async () => { await (await fetch(url)).text(); while (!stop) { const t = performance.now(); await (await fetch(url)).text(); worst = Math.max(worst, performance.now() - t); n++; await new Promise((r) => setTimeout(r, 20)); } console.log(JSON.stringify({ worst, n })); process.exit(0); })();`;
  const long = sb;
  // what answering the poller costs the process by itself, measured the same way without a command
  const idle = async (seconds: number) => {
    const poller = spawn(process.execPath, ['-e', POLL, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((r) => setTimeout(r, 300));
    const cpu = process.cpuUsage();
    const t = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const used = process.cpuUsage(cpu);
    const wall = performance.now() - t;
    poller.stdin.end('stop');
    await new Promise((r) => poller.on('exit', r));
    return (used.user + used.system) / 1000 / wall;
  };
  const pollRate = await idle(5);
  console.log(`\na ${LONG_S} s command (sleep) through LinuxSandbox.run in each ${large}-file tree, looks every 2 s or more while it runs (the host side is the daemon's CPU less what answering the poller costs when idle: ${(100 * pollRate).toFixed(1)}% of a core):`);
  for (const name of ['shallow', 'deep'] as const) {
    const ws = workspaces[name];
    await long.run({ argv: ['true'], cwd: ws, env, timeoutMs: 600_000, policy: policyOf(ws) }); // the service's own listings
    const poller = spawn(process.execPath, ['-e', POLL, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    poller.stdout.on('data', (d) => (out += d));
    await new Promise((r) => setTimeout(r, 300));
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const cpu = process.cpuUsage();
    const t = performance.now();
    const r = await long.run({ argv: ['sleep', String(LONG_S)], cwd: ws, env, timeoutMs: 600_000, policy: policyOf(ws) });
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    h.disable();
    poller.stdin.end('stop');
    await new Promise((r) => poller.on('exit', r));
    if (r.exitCode !== 0) throw new Error(`sleep failed in ${name}: ${r.stderr}`);
    const { worst, n } = JSON.parse(out) as { worst: number; n: number };
    const cpuMs = (used.user + used.system) / 1000;
    const host = Math.max(0, cpuMs - pollRate * wall);
    console.log(`  ${name.padEnd(8)} daemon CPU ${ms(cpuMs)} over ${ms(wall)}; host side ${ms(host)} = ${((100 * host) / wall).toFixed(1)}% of a core (target < 2%)   /healthz worst ${ms(worst)} of ${n} (target <= 50 ms)   event-loop stall ${ms(h.max / 1e6)}`);
    recordFigure({ id: `sandbox-linux.host-cpu-long-${name}`, what: `the host side's CPU while a ${LONG_S} s command runs through \`LinuxSandbox.run\` in a ${large}-file ${name} workspace`, candidate: (100 * host) / wall, unit: '%', target: { on: 'value', op: '<', limit: 2 }, rounds: 1, note: `% of a core: the process's whole CPU ${((100 * cpuMs) / wall).toFixed(1)}%, less what answering the poller costs idle (${(100 * pollRate).toFixed(1)}%; 0 when the first is below the second)` });
    recordFigure({ id: `sandbox-linux.healthz-long-${name}`, what: `in-process \`/healthz\` worst answer while that command runs (${name})`, candidate: worst, unit: 'ms', target: { on: 'value', op: '<=', limit: 50 }, rounds: n, note: `${n} answers; event-loop stall ${ms(h.max / 1e6)}` });
  }
  server.close();
}

if (process.env.BENCH_THREAD_SCAN === '0') process.exit(0);
console.log('\none scan on this thread: cold (every directory read), warm (listings kept), and a bare readdir walk:');
for (const name of ['shallow', 'deep'] as const) {
  const ws = workspaces[name];
  let t = performance.now();
  const facts = scanHost(policyOf(ws), ws, { home, noCache: true });
  const cold = performance.now() - t;
  scanHost(policyOf(ws), ws, { home }); // fills this thread's listings
  t = performance.now();
  scanHost(policyOf(ws), ws, { home });
  const warm = performance.now() - t;
  t = performance.now();
  let n = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      n += 1;
      if (e.isDirectory()) walk(join(d, e.name));
    }
  };
  walk(ws);
  const bare = performance.now() - t;
  console.log(`  ${name.padEnd(8)} cold ${ms(cold)}   warm ${ms(warm)}   (${facts.visited} entries)   bare readdir walk ${ms(bare)} (${n} entries)`);
}

const realHome = homedir();
for (const depth of [HOME_DEPTH, Number.POSITIVE_INFINITY]) {
  const t = performance.now();
  const n = walkTree(realHome, { entry: () => true, unreadable: () => {} }, depth);
  console.log(`walk of ${realHome} to depth ${depth}: ${ms(performance.now() - t)} (${n} entries)`);
}
process.exit(0);

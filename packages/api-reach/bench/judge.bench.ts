// The hot path of every tool call: judgeReach for a write, against the full lists of a
// realistic install (source form, one workspace, two extra roots, three git dirs). Also the
// once-per-call cost of protectedLists + resolveReach. Baseline in the same run: the same
// judgment with the rules compiled per call instead of once per reach.
import { compileRules, judgeReach, type LocalReach, preparePath, protectedLists, type ReachInput, resolveReach, toolchainCacheDirs } from '../src/index.js';
import { DATA, HOME, PATHS } from '../test/fixture.js';
import { recordFigure } from '../../../test/bench/record-figure.js';

const PROJECT = `${HOME}/code/shop`;

function input(): ReachInput {
  const paths = PATHS;
  const lists = protectedLists({ paths, userHome: HOME, platform: 'linux', form: 'source', codeDirs: [`${HOME}/plugins/linked`] });
  return {
    principal: 'owner',
    tier: 'workspace',
    onBoundary: 'ask',
    place: { home: PROJECT },
    binding: { extraRoots: [`${HOME}/code/lib`, '/srv/shared'], worktrees: [] },
    gitDirs: [`${PROJECT}/.git`, `${HOME}/code/lib/.git`, '/srv/repos/shared.git'],
    sessionTmp: `${DATA}/tmp/s-4f2a`,
    localPorts: [7777],
    lists,
    paths,
    toolchainCaches: toolchainCacheDirs(HOME, 'linux'),
  };
}

const TARGETS = {
  'in the workspace (every rule checked)': `${PROJECT}/packages/web/src/components/cart/CartSummary.tsx`,
  'a landing (git hook)': `${PROJECT}/.git/hooks/pre-commit`,
  'the control plane': `${DATA}/plugins/reach/state.json`,
  'out of range': `${HOME}/Documents/notes/2026/plan.md`,
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median ns per call over `samples` batches of `batch` calls, after a warm-up. */
function measure(fn: () => unknown, batch: number, samples: number): number {
  for (let i = 0; i < batch * 5; i++) fn();
  const per: number[] = [];
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) fn();
    per.push(((performance.now() - t0) * 1e6) / batch);
  }
  return median(per);
}

/** The baseline: the same write order, rules compiled on every call. */
function judgeUncompiled(reach: LocalReach, path: string): string {
  const p = preparePath(path, 'linux');
  if (compileRules(reach.lists.control, 'linux').test(p)) return 'control';
  if (compileRules(reach.lists.landing, 'linux').test(p)) return 'landing';
  return compileRules(reach.writableRoots.map((r) => ({ path: r })), 'linux').test(p) ? 'allow' : 'ask';
}

const reach = resolveReach(input());
if (reach.exec === 'none') throw new Error('the benchmark reach has no local effect');
console.log(
  `rules: ${reach.lists.control.length} control, ${reach.lists.landing.length} landing, ${reach.lists.denyRead.length} deny-read; ${reach.writableRoots.length} writable roots`,
);

const TARGET_NS = 2000;
let worst = 0;
let worstBase = 0;
for (const [name, path] of Object.entries(TARGETS)) {
  const request = { effect: 'write', path } as const;
  const verdict = judgeReach(reach, request).verdict;
  const ns = measure(() => judgeReach(reach, request), 2000, 101);
  const base = measure(() => judgeUncompiled(reach, path), 20, 51);
  if (ns > worst) worstBase = base;
  worst = Math.max(worst, ns);
  console.log(
    `judgeReach write, ${name} (${verdict}): median ${(ns / 1000).toFixed(3)} µs, ${Math.round(1e9 / ns).toLocaleString('en')} judgments/s; ` +
      `compiled per call: ${(base / 1000).toFixed(1)} µs (${(base / ns).toFixed(0)}× slower)`,
  );
}
const readNs = measure(() => judgeReach(reach, { effect: 'read', path: TARGETS['in the workspace (every rule checked)'] }), 2000, 101);
console.log(`judgeReach read, in the workspace: median ${(readNs / 1000).toFixed(3)} µs, ${Math.round(1e9 / readNs).toLocaleString('en')} judgments/s`);

const setupNs = measure(() => resolveReach(input()), 20, 51);
console.log(`protectedLists + resolveReach (compiles every rule): median ${(setupNs / 1000).toFixed(1)} µs, ${Math.round(1e9 / setupNs).toLocaleString('en')}/s`);
const once = input();
const perCallNs = measure(() => resolveReach(once), 200, 51);
console.log(
  `resolveReach with lists built once (per call; compiles only git-dir landings and roots): median ${(perCallNs / 1000).toFixed(1)} µs (${(setupNs / perCallNs).toFixed(0)}× less than building the lists too)`,
);

console.log(`target: a write judgment under ${TARGET_NS / 1000} µs median: ${worst < TARGET_NS ? 'met' : 'MISSED'} (slowest case ${(worst / 1000).toFixed(3)} µs)`);
recordFigure({ id: 'api-reach.judge-write', what: "`judgeReach` for a write against a source install's full lists, the slowest case", candidate: worst / 1000, baseline: { what: 'the same rules compiled per call', value: worstBase / 1000 }, unit: 'µs', target: { on: 'value', op: '<', limit: TARGET_NS / 1000 }, rounds: 101 });

import { describe, expect, it } from 'vitest';
import { DATA, HOME, PROJECT, reachInput, SESSION_TMP } from '../test/fixture.js';
import { ReachInputError } from './errors.js';
import { judgeReach, type ReachDecision, type ReachRequest } from './judge.js';
import { resolveReach } from './reach.js';
import { ACCESS_TIERS, type AccessTier, type BoundaryPolicy } from './tier.js';

// A allow · AL allow with landing · T/L/W/H/N ask (tier, landing, write-path, host-exec, network)
// C/R/K/X deny (control-plane, deny-read, kernel-tree, no-local-effect) · dL/dW/dH/dN deny by boundary policy
type Code = 'A' | 'AL' | 'T' | 'L' | 'W' | 'H' | 'N' | 'C' | 'R' | 'K' | 'X' | 'dL' | 'dW' | 'dH' | 'dN';

const DECISION: Record<Code, ReachDecision> = {
  A: { verdict: 'allow' },
  AL: { verdict: 'allow', landing: true },
  T: { verdict: 'ask', reason: { kind: 'tier' } },
  L: { verdict: 'ask', reason: { kind: 'landing' } },
  W: { verdict: 'ask', reason: { kind: 'boundary', target: 'write-path' } },
  H: { verdict: 'ask', reason: { kind: 'boundary', target: 'host-exec' } },
  N: { verdict: 'ask', reason: { kind: 'boundary', target: 'network' } },
  C: { verdict: 'deny', rule: 'control-plane' },
  R: { verdict: 'deny', rule: 'deny-read' },
  K: { verdict: 'deny', rule: 'kernel-tree' },
  X: { verdict: 'deny', rule: 'no-local-effect' },
  dL: { verdict: 'deny', rule: 'boundary-policy', reason: { kind: 'landing' } },
  dW: { verdict: 'deny', rule: 'boundary-policy', reason: { kind: 'boundary', target: 'write-path' } },
  dH: { verdict: 'deny', rule: 'boundary-policy', reason: { kind: 'boundary', target: 'host-exec' } },
  dN: { verdict: 'deny', rule: 'boundary-policy', reason: { kind: 'boundary', target: 'network' } },
};

const read = (path: string): ReachRequest => ({ effect: 'read', path });
const write = (path: string): ReachRequest => ({ effect: 'write', path });

// Columns: readonly, confirm, workspace, full with boundary `ask` | the same with boundary `deny` | other (any tier).
type Row = readonly [string, ReachRequest, readonly [Code, Code, Code, Code], readonly [Code, Code, Code, Code], Code];
const TABLE: readonly Row[] = [
  ['read anywhere', read('/etc/hosts'), ['A', 'A', 'A', 'A'], ['A', 'A', 'A', 'A'], 'X'],
  ['read a credential file', read(`${HOME}/.ssh/id_ed25519`), ['R', 'R', 'R', 'R'], ['R', 'R', 'R', 'R'], 'X'],
  ['read .env in the session temp', read(`${SESSION_TMP}/.env`), ['A', 'A', 'A', 'A'], ['A', 'A', 'A', 'A'], 'X'],
  ["read another session's temp", read(`${DATA}/tmp/s2/out.txt`), ['R', 'R', 'R', 'R'], ['R', 'R', 'R', 'R'], 'X'],
  ['read .env in the project', read(`${PROJECT}/.env`), ['R', 'R', 'R', 'R'], ['R', 'R', 'R', 'R'], 'X'],
  // the daemon's own process and the host kernel, seen host-side (found by an attack: a pod task read
  // the owner's token out of /proc/self/mem through read_file)
  ["read the daemon's memory", read('/proc/self/mem'), ['K', 'K', 'K', 'K'], ['K', 'K', 'K', 'K'], 'X'],
  ["read another process's environment", read('/proc/1/environ'), ['K', 'K', 'K', 'K'], ['K', 'K', 'K', 'K'], 'X'],
  ['read /proc itself', read('/proc'), ['K', 'K', 'K', 'K'], ['K', 'K', 'K', 'K'], 'X'],
  ['read the kernel tree /sys', read('/sys/kernel/notes'), ['K', 'K', 'K', 'K'], ['K', 'K', 'K', 'K'], 'X'],
  ['read a lookalike of /proc', read('/procfs/notes'), ['A', 'A', 'A', 'A'], ['A', 'A', 'A', 'A'], 'X'],
  ['write a kernel setting', write('/proc/sys/kernel/core_pattern'), ['K', 'K', 'K', 'K'], ['K', 'K', 'K', 'K'], 'X'],
  ['write /sys', write('/sys/power/state'), ['K', 'K', 'K', 'K'], ['K', 'K', 'K', 'K'], 'X'],
  ['read the main config', read(`${DATA}/config.yaml`), ['A', 'A', 'A', 'A'], ['A', 'A', 'A', 'A'], 'X'],
  ['write plugin state', write(`${DATA}/plugins/reach/state.json`), ['C', 'C', 'C', 'C'], ['C', 'C', 'C', 'C'], 'X'],
  ['write secrets.yaml', write(`${DATA}/secrets.yaml`), ['C', 'C', 'C', 'C'], ['C', 'C', 'C', 'C'], 'X'],
  ['write a git hook', write(`${PROJECT}/.git/hooks/pre-commit`), ['L', 'L', 'L', 'AL'], ['dL', 'L', 'dL', 'AL'], 'X'],
  ['write self/', write(`${DATA}/self/skills/x.md`), ['L', 'L', 'L', 'AL'], ['dL', 'L', 'dL', 'AL'], 'X'],
  ['write a bare-repository HEAD', write(`${PROJECT}/evil/HEAD`), ['L', 'L', 'L', 'AL'], ['dL', 'L', 'dL', 'AL'], 'X'],
  ['write the bare git dir hooks', write('/srv/repos/app.git/hooks/post-update'), ['L', 'L', 'L', 'AL'], ['dL', 'L', 'dL', 'AL'], 'X'],
  ['write the bare git dir itself', write('/srv/repos/app.git'), ['L', 'L', 'L', 'AL'], ['dL', 'L', 'dL', 'AL'], 'X'],
  ['write the bare git dir objects', write('/srv/repos/app.git/objects/ab/cd'), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write a git HEAD', write(`${PROJECT}/.git/HEAD`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write the bare git dir HEAD', write('/srv/repos/app.git/HEAD'), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write the main directory', write(`${PROJECT}/src/a.ts`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write .env in the main directory', write(`${PROJECT}/.env`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write the session temp', write(`${SESSION_TMP}/out.txt`), ['A', 'T', 'A', 'A'], ['A', 'T', 'A', 'A'], 'X'],
  ['write an extra root', write(`${HOME}/extra/x`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ["write the session tree's worktree", write(`${HOME}/wt/feature/x`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write git objects', write(`${PROJECT}/.git/objects/ab/cd`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ['write a toolchain cache (the sandbox\'s own)', write(`${HOME}/.cache/aalis-sandbox/npm/_cacache/x`), ['W', 'T', 'A', 'A'], ['dW', 'T', 'A', 'A'], 'X'],
  ["write the host's npm cache", write(`${HOME}/.npm/_cacache/x`), ['W', 'T', 'W', 'A'], ['dW', 'T', 'dW', 'A'], 'X'],
  ["write the host's cargo registry", write(`${HOME}/.cargo/registry/cache/i/serde-1.0.0.crate`), ['W', 'T', 'W', 'A'], ['dW', 'T', 'dW', 'A'], 'X'],
  ['write out of range', write(`${HOME}/other/a`), ['W', 'T', 'W', 'A'], ['dW', 'T', 'dW', 'A'], 'X'],
  ['write a lookalike of the main directory', write(`${PROJECT}-old/a`), ['W', 'T', 'W', 'A'], ['dW', 'T', 'dW', 'A'], 'X'],
  ['write a workflow', { effect: 'write', workflow: 'nightly' }, ['L', 'L', 'L', 'AL'], ['dL', 'L', 'dL', 'AL'], 'X'],
  ['exec in the sandbox', { effect: 'exec', host: false }, ['A', 'T', 'A', 'A'], ['A', 'T', 'A', 'A'], 'X'],
  ['exec on the host', { effect: 'exec', host: true }, ['H', 'T', 'H', 'A'], ['dH', 'T', 'dH', 'A'], 'X'],
  ['network by url', { effect: 'network', via: 'url' }, ['N', 'A', 'A', 'A'], ['dN', 'A', 'A', 'A'], 'A'],
  ['network by command', { effect: 'network', via: 'command' }, ['N', 'A', 'A', 'A'], ['dN', 'A', 'A', 'A'], 'A'],
  ['network by provider', { effect: 'network', via: 'provider' }, ['N', 'A', 'A', 'A'], ['dN', 'A', 'A', 'A'], 'A'],
];

const cells = TABLE.flatMap(([name, request, ask, deny, other]) =>
  ACCESS_TIERS.flatMap((tier, i) => [
    [name, tier, 'ask', request, ask[i]!] as const,
    [name, tier, 'deny', request, deny[i]!] as const,
    ...(['ask', 'deny'] as const).map((b) => [`${name} (other)`, tier, b, request, other] as const),
  ]),
);

describe('judgeReach: the tier table', () => {
  const reaches = new Map<string, ReturnType<typeof resolveReach>>();
  const reachOf = (principal: 'owner' | 'other', tier: AccessTier, b: BoundaryPolicy) => {
    const key = `${principal}/${tier}/${b}`;
    let r = reaches.get(key);
    if (r === undefined) {
      r = resolveReach(reachInput(principal, tier, b));
      reaches.set(key, r);
    }
    return r;
  };
  it.each(cells)('%s · %s · boundary %s', (name, tier, boundary, request, code) => {
    const principal = name.endsWith('(other)') ? 'other' : 'owner';
    expect(judgeReach(reachOf(principal, tier, boundary), request)).toEqual(DECISION[code]);
  });
});

describe('judgeReach: edges', () => {
  const reach = resolveReach(reachInput('owner', 'workspace', 'ask'));

  it('refuses relative and unresolved paths instead of judging them', () => {
    expect(() => judgeReach(reach, write('proj/a'))).toThrow(ReachInputError);
    expect(() => judgeReach(reach, write(`${PROJECT}/../.bashrc`))).toThrow(/'\.\.' segments/);
    expect(() => judgeReach(reach, { effect: 'fly' } as unknown as ReachRequest)).toThrow(/effect must be read, write, exec or network/);
    expect(() => judgeReach(reach, { effect: 'write', workflow: '' })).toThrow(/workflow id/);
  });

  it('a trailing slash or doubled slash changes nothing', () => {
    expect(judgeReach(reach, write(`${PROJECT}/.git/hooks/`))).toEqual(DECISION.L);
    expect(judgeReach(reach, write(`${DATA}//plugins/x`))).toEqual(DECISION.C);
  });

  it('an exec request without an explicit host: false is judged as a host exec', () => {
    expect(judgeReach(reach, { effect: 'exec' } as unknown as ReachRequest)).toEqual(DECISION.H);
  });

  it('the extended landings include each git dir and HEAD outside git dirs', () => {
    expect(judgeReach(reach, write('/srv/repos/app.git/worktrees/w/commondir'))).toEqual(DECISION.L);
    expect(judgeReach(reach, write('/srv/repos/app.git/modules/a/b/config'))).toEqual(DECISION.L);
    expect(judgeReach(reach, write('/srv/repos/app.git/worktrees/w/HEAD'))).toEqual(DECISION.A);
    expect(judgeReach(reach, write(`${PROJECT}/.git/logs/HEAD`))).toEqual(DECISION.A);
    expect(judgeReach(reach, write(`${PROJECT}/node_modules/x/HEAD`))).toEqual(DECISION.L);
  });
});

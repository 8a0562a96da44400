import type { SandboxPolicy } from '@aalis/api-reach';
import { isWithin, type RuleSet, ruleSet } from './rule-match.js';

/** What a path is inside the sandbox: hidden, visible read-only, or writable. */
export const PATH_STATES = ['hidden', 'ro', 'rw'] as const;
/** One of {@link PATH_STATES}. */
export type PathState = (typeof PATH_STATES)[number];

/**
 * A name no rule is meant to match: the state of a new child of a directory decides how the
 * directory's contents are mounted, the state of the directory's own path whether it is pinned.
 */
export const PROBE_CHILD = '\u0001aalis-new-entry';

/**
 * A policy compiled for asking about one real path at a time: its layers evaluated, later layers winning:
 * reads default → readDeny → readAllowWithin; writes default deny → write → writeDeny →
 * writeExceptions → controlDeny. Rules cover subtrees themselves (`{ path }`, or a pattern ending in
 * `(?:/.*)?`), so a carve-out under a hidden directory is put back by its own mount.
 */
export class PolicyEvaluator {
  private readonly readDeny: RuleSet;
  private readonly writeDeny: RuleSet;
  private readonly writeExceptions: RuleSet;
  private readonly controlDeny: RuleSet;

  constructor(readonly policy: SandboxPolicy) {
    this.readDeny = ruleSet(policy.readDeny);
    this.writeDeny = ruleSet(policy.writeDeny);
    this.writeExceptions = ruleSet(policy.writeExceptions);
    this.controlDeny = ruleSet(policy.controlDeny);
  }

  /** Hidden by readDeny and not put back by readAllowWithin. */
  hidden(path: string): boolean {
    if (this.policy.readAllowWithin.some((root) => isWithin(path, root))) return false;
    return this.readDeny.covers(path);
  }

  /** Writable after every write layer. */
  writable(path: string): boolean {
    const p = this.policy;
    let w = p.write.some((root) => isWithin(path, root));
    if (w && this.writeDeny.covers(path)) w = false;
    if (!w && this.writeExceptions.covers(path)) w = true;
    if (w && this.controlDeny.covers(path)) w = false;
    return w;
  }

  /** The state of the path's own entry. */
  entry(path: string): PathState {
    if (this.hidden(path)) return 'hidden';
    return this.writable(path) ? 'rw' : 'ro';
  }

  /** For a directory: the state its contents get (that of a new child); for a file, its own. */
  contents(path: string, isDir: boolean): PathState {
    if (!isDir) return this.entry(path);
    if (this.hidden(path)) return 'hidden';
    return this.writable(childOf(path, PROBE_CHILD)) ? 'rw' : 'ro';
  }
}

/** `dir/name` without doubling the slash at the root. */
export function childOf(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

const cache = new WeakMap<SandboxPolicy, PolicyEvaluator>();

/** The {@link PolicyEvaluator} of a policy object, compiled once however many steps of a run ask for them. */
export function policyEvaluatorOf(policy: SandboxPolicy): PolicyEvaluator {
  let evaluator = cache.get(policy);
  if (!evaluator) {
    evaluator = new PolicyEvaluator(policy);
    cache.set(policy, evaluator);
  }
  return evaluator;
}

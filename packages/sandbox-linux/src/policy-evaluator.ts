import { namedPathsUnder, patternShadowedBy, type SandboxPolicy } from '@aalis/api-reach';
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
  /*
   * The answers already given, by path: a daemon's runs of one conversation ask about the same
   * paths every time (translate.ts asks hundreds of them against a policy of hundreds of rules,
   * a millisecond of the daemon's thread a run, twice with a sandbox prepared ahead). An answer
   * depends on the path and the policy only, and a policy does not change (it is read-only data,
   * checked once: api-reach's parseRunRequest). Emptied when full, so a commit or a walk of a
   * million entries keeps no more than this many.
   */
  private readonly hiddenAnswers = new Map<string, boolean>();
  private readonly writableAnswers = new Map<string, boolean>();

  constructor(readonly policy: SandboxPolicy) {
    this.readDeny = ruleSet(policy.readDeny);
    this.writeDeny = ruleSet(policy.writeDeny);
    this.writeExceptions = ruleSet(policy.writeExceptions);
    this.controlDeny = ruleSet(policy.controlDeny);
  }

  /** Hidden by readDeny and not put back by readAllowWithin. */
  hidden(path: string): boolean {
    let answer = this.hiddenAnswers.get(path);
    if (answer === undefined) {
      answer = !this.policy.readAllowWithin.some((root) => isWithin(path, root)) && this.readDeny.covers(path);
      remember(this.hiddenAnswers, path, answer);
    }
    return answer;
  }

  /** Writable after every write layer. */
  writable(path: string): boolean {
    let answer = this.writableAnswers.get(path);
    if (answer === undefined) {
      const p = this.policy;
      answer = p.write.some((root) => isWithin(path, root));
      if (answer && this.writeDeny.covers(path)) answer = false;
      if (!answer && this.writeExceptions.covers(path)) answer = true;
      if (answer && this.controlDeny.covers(path)) answer = false;
      remember(this.writableAnswers, path, answer);
    }
    return answer;
  }

  /**
   * A path a rule names (`{ path }`) strictly under `path` that is hidden or not writable, or the
   * paths a deny pattern covers through `path` (api-reach's `patternShadowedBy`): a symlink made at
   * `path` would send them elsewhere (`~/.npm -> mine` when `~/.npm/_npx` is a landing and `~/.npm`
   * is missing; `sub/nix -> ../evil` in a flake's folder; found by attacks). Undefined when there is none.
   */
  shadowed(path: string): string | undefined {
    const named = namedPathsUnder(this.policy, path, (p) => this.hidden(p) || !this.writable(p))[0];
    if (named !== undefined) return named;
    const pattern = patternShadowedBy(this.policy, path);
    return pattern === undefined ? undefined : `the paths matching ${pattern}`;
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

/** How many answers of each kind an evaluator keeps (see PolicyEvaluator's answers). */
export const EVALUATOR_ANSWERS_KEPT = 16_384;

function remember(answers: Map<string, boolean>, path: string, answer: boolean): void {
  if (answers.size >= EVALUATOR_ANSWERS_KEPT) answers.clear();
  answers.set(path, answer);
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

import { type CompiledRules, compileRules, type PathRule, pathIsUnder, preparePath } from '@aalis/api-reach';

/** True when `path` is `root` or lies beneath it: api-reach's {@link pathIsUnder} as Linux compares (with case). */
export function isWithin(path: string, root: string): boolean {
  return pathIsUnder(path, root, 'linux');
}

/** Rules compiled once with api-reach's matcher (the contract's semantics: whole-path patterns, `except`). */
export interface RuleSet {
  covers(path: string): boolean;
}

/** Compiles rules for Linux; a pattern outside the contract's subset throws, so nothing is translated. */
export function ruleSet(rules: readonly PathRule[]): RuleSet {
  const compiled: CompiledRules = compileRules(rules, 'linux');
  return { covers: (path) => compiled.test(preparePath(path, 'linux')) };
}

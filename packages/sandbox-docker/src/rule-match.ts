import { compileRules, type PathRule, pathIsUnder, preparePath } from '@aalis/api-reach';

/**
 * Whether `path` (a real path) is `root` or lies under it: api-reach's {@link pathIsUnder} as
 * the engine's Linux compares (with case). The caller has taken real paths first.
 */
export function isWithin(path: string, root: string): boolean {
  return pathIsUnder(path, root, 'linux');
}

/**
 * A list of rules compiled once with api-reach's `compileRules` for Linux, where the engine's
 * paths live: the returned test says whether any rule covers a real path. Throws api-reach's
 * `ReachInputError` for a pattern outside the subset the sandboxes translate.
 */
export function rulesCover(rules: readonly PathRule[]): (path: string) => boolean {
  const compiled = compileRules(rules, 'linux');
  return (path) => compiled.test(preparePath(path, 'linux'));
}

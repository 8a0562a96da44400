import type { PathMatcher, PathRule } from '@aalis/api-reach';

/**
 * Whether `path` (a real path) is `root` or lies under it. Both are compared as given: the
 * caller has taken real paths first.
 */
export function isWithin(path: string, root: string): boolean {
  if (root === '/') return path.startsWith('/');
  return path === root || path.startsWith(`${root}/`);
}

function matcherCovers(matcher: PathMatcher, path: string): boolean {
  if ('path' in matcher) return isWithin(path, matcher.path);
  // A pattern is matched against the whole path (api-reach's PathMatcher contract).
  return new RegExp(`^(?:${matcher.pattern})$`).test(path);
}

/**
 * Whether a rule covers a real path on Linux, where the engine's paths live: `{ path }` covers it
 * and everything under it, `{ pattern }` is anchored to the whole path, `except` carves out.
 * Same reading as api-reach's `matchesRule` for the `linux` platform.
 */
export function ruleCovers(rule: PathRule, path: string): boolean {
  if (!matcherCovers(rule, path)) return false;
  return !(rule.except ?? []).some((carveOut) => matcherCovers(carveOut, path));
}

/** Whether any rule of a list covers the path. */
export function anyRuleCovers(rules: readonly PathRule[], path: string): boolean {
  return rules.some((rule) => ruleCovers(rule, path));
}

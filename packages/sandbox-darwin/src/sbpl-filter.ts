import type { PathMatcher, PathRule } from '@aalis/api-reach';
import { darwinPath, darwinPatternPrefix } from './darwin-path.js';
import { hasCaseVariants, literalRegex, translatePattern } from './sbpl-regex.js';
import { inlineQuote, type SbplQuote } from './profile-params.js';

/** A Seatbelt path filter, before it is written out. */
export type SbplFilter =
  | { readonly kind: 'subpath' | 'literal' | 'regex'; readonly value: string }
  | { readonly kind: 'require-any' | 'require-all'; readonly items: readonly SbplFilter[] }
  | { readonly kind: 'require-not'; readonly item: SbplFilter };

/** How a `{ path }` is covered: the path and everything under it, or exactly that path. */
export type PathReach = 'subtree' | 'exact';

function anyOf(items: SbplFilter[]): SbplFilter {
  return items.length === 1 ? items[0]! : { kind: 'require-any', items };
}

/**
 * The filter for one path. Seatbelt compares bytes, the darwin contract compares without case,
 * so a path with letters gets its exact `subpath`/`literal` and a case-folded `regex` beside it.
 */
export function pathFilter(path: string, reach: PathReach, rule: string): SbplFilter {
  const spelled = darwinPath(path, rule);
  const exact: SbplFilter = { kind: reach === 'subtree' ? 'subpath' : 'literal', value: spelled };
  if (!hasCaseVariants(spelled)) return exact;
  const body = literalRegex(spelled);
  const tail = reach === 'exact' ? '$' : spelled === '/' ? '' : '(/|$)';
  return anyOf([exact, { kind: 'regex', value: `^${body}${tail}` }]);
}

// `^/exact/path$` with nothing but literal characters: "this one path, nothing under it".
const EXACT_PATTERN = /^\^((?:[^\\^$.|?*+()[\]{}]|\\[./-])+)\$$/;

/** The exact path a pattern names when it is nothing but `^`, literal characters and `$`. */
export function exactPathOf(pattern: string): string | undefined {
  const match = EXACT_PATTERN.exec(pattern);
  return match === null ? undefined : match[1]!.replace(/\\(.)/g, '$1');
}

/**
 * The filter for one matcher: `{ path }` covers its subtree; a pattern that names one exact
 * absolute path becomes a `literal`; any other pattern is translated to a `regex`.
 */
export function matcherFilter(matcher: PathMatcher, rule: string): SbplFilter {
  if ('path' in matcher) return pathFilter(matcher.path, 'subtree', rule);
  const exact = exactPathOf(matcher.pattern);
  if (exact?.startsWith('/')) return pathFilter(exact, 'exact', rule);
  return { kind: 'regex', value: translatePattern(darwinPatternPrefix(matcher.pattern), rule) };
}

/** The filter for a rule with its carve-outs: the matcher, and none of the `except` matchers. */
export function ruleFilter(rule: PathRule, where: string): SbplFilter {
  const main = matcherFilter(rule, where);
  const except = rule.except ?? [];
  if (except.length === 0) return main;
  const carveOuts = except.map((matcher, index) => ({ kind: 'require-not', item: matcherFilter(matcher, `${where}.except[${index}]`) }) as const);
  return { kind: 'require-all', items: [main, ...carveOuts] };
}

/** `filter` as SBPL text; every string goes through `quote` (inline {@link sbplString} unless a parameter collector is given). */
export function renderFilter(filter: SbplFilter, rule: string, quote: SbplQuote = inlineQuote): string {
  switch (filter.kind) {
    case 'subpath':
    case 'literal':
    case 'regex':
      return `(${filter.kind} ${quote(filter.value, rule)})`;
    case 'require-any':
    case 'require-all':
      return `(${filter.kind} ${filter.items.map((item) => renderFilter(item, rule, quote)).join(' ')})`;
    case 'require-not':
      return `(require-not ${renderFilter(filter.item, rule, quote)})`;
  }
}

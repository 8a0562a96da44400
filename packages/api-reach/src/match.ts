import { assertRealPathShape, escapePattern, foldPath, foldsCase } from './path.js';
import { requiredLiteral, topLevelAlternatives, validatePattern } from './pattern.js';
import type { PathMatcher, PathRule } from './rule.js';

/** A path prepared once for many rule tests: slashed for patterns, folded for `{ path }` roots. */
export interface PreparedPath {
  /** Backslashes as slashes (win32), no repeated or trailing slash. */
  readonly slashed: string;
  /** `slashed`, lower-cased where the platform compares without case. */
  readonly folded: string;
}

/**
 * Checks a real path (absolute, no `.` / `..` segments, else {@link ReachInputError}) and
 * prepares it once for many {@link CompiledRules.test} calls, in the form the rules were compiled to.
 */
export function preparePath(path: string, platform: NodeJS.Platform, what = 'the path'): PreparedPath {
  const slashed = assertRealPathShape(path, platform, what);
  return { slashed, folded: foldsCase(platform) ? slashed.toLowerCase() : slashed };
}

/** Rules compiled once for one platform: regexes built and roots folded, ready for many paths. */
export interface CompiledRules {
  readonly platform: NodeJS.Platform;
  /** Whether any of the rules covers the path. */
  test(path: PreparedPath): boolean;
}

function flagsOf(platform: NodeJS.Platform): string {
  return foldsCase(platform) ? 'isu' : 'su';
}

function anchored(pattern: string): string {
  return `^(?:${pattern})$`;
}

const ANYWHERE = '^.*/';

/** The part after `^.*\/` and before `$` when a pattern has exactly that shape, else undefined. */
function anywhereTail(pattern: string): string | undefined {
  if (!pattern.startsWith(ANYWHERE) || !pattern.endsWith('$') || topLevelAlternatives(pattern).length > 1) return undefined;
  const tail = pattern.slice(ANYWHERE.length, -1);
  // An escaped '$' or a quantifier right after the slash would change meaning when cut out.
  if (tail.length === 0 || /^[*+?{]/.test(tail) || /(^|[^\\])(\\\\)*\\$/.test(tail)) return undefined;
  return tail;
}

/** Compiled regexes kept by flags and source, least recently used first. */
const regexes = new Map<string, RegExp>();
/**
 * How many {@link regexes} are kept: every list of a daemon's reaches and a run's policy is
 * compiled again per call or run (a new reach, a new policy object), mostly to the same sources:
 * an `aalis exec` run compiles 24 distinct regexes, 3 of them new at each run (its session's own
 * directory). The largest holds about 60 KB of heap once compiled, so this bounds the cache near
 * 4 MB however many conversations a daemon serves, and keeps a run's own set with room to spare.
 */
const REGEXES_KEPT = 64;

/**
 * The regex of a source, compiled once while it stays among the {@link REGEXES_KEPT} last used:
 * V8's own cache of compiled regexes drops a source by the second full collection after its use
 * (measured: a 5 KB list compiled again, milliseconds), while a RegExp kept here keeps its code
 * through any number. Safe to share: none has the `g` or `y` flag, so `test` keeps no state.
 */
function regexOf(source: string, flags: string): RegExp {
  const key = `${flags}/${source}`;
  let regex = regexes.get(key);
  if (regex !== undefined) {
    regexes.delete(key);
  } else {
    regex = new RegExp(source, flags);
    if (regexes.size >= REGEXES_KEPT) regexes.delete(regexes.keys().next().value!);
  }
  regexes.set(key, regex);
  return regex;
}

/** A pattern at least this long is compiled on its own (see {@link mergePatterns}). */
const ALONE_FROM = 512;

/**
 * The patterns of a list as few regexes: those of the form `^.*\/TAIL$` share their prefix, so
 * one regex tries every tail at each slash instead of rescanning the path per rule (the hot path
 * of every write); the other short ones make a second; each long one (a landing list folded into
 * one pattern) is a regex of its own. Split so, a list that differs from the last one compiled by
 * one short pattern (a session's own directory among the roots of the node_modules exception, new
 * at every run) compiles only its short part again: compiling is superlinear in a regex's length,
 * and the whole list in one regex took 4.3 ms to compile against 0.9 ms for that part.
 */
function mergePatterns(patterns: readonly string[], platform: NodeJS.Platform): ((path: string) => boolean) | undefined {
  const tails: string[] = [];
  const short: string[] = [];
  const long: string[] = [];
  for (const p of patterns) {
    const tail = anywhereTail(p);
    if (tail !== undefined) tails.push(`(?:${tail})`);
    else if (p.length < ALONE_FROM) short.push(`(?:${p})`);
    else long.push(p);
  }
  const flags = flagsOf(platform);
  const parts: Array<(path: string) => boolean> = [];
  const test = (regex: RegExp) => (path: string) => regex.test(path);
  if (tails.length > 0) parts.push(test(regexOf(anchored(`.*/(?:${tails.join('|')})`), flags)));
  if (short.length > 0) parts.push(test(regexOf(anchored(short.join('|')), flags)));
  for (const p of long) {
    const regex = regexOf(anchored(p), flags);
    // where case counts: a path without the pattern's required literal is ruled out before the regex runs
    const literal = foldsCase(platform) ? '' : requiredLiteral(p);
    parts.push(literal.length >= REQUIRED_FROM ? (path) => path.includes(literal) && regex.test(path) : test(regex));
  }
  if (parts.length <= 1) return parts[0];
  return (path) => {
    for (const part of parts) if (part(path)) return true;
    return false;
  };
}

/** A required literal (pattern.ts `requiredLiteral`) at least this long is looked for first. */
const REQUIRED_FROM = 3;

interface TrieNode {
  end: boolean;
  next: Map<string, TrieNode>;
}

function emitTrie(node: TrieNode, first: boolean): string {
  const branches = [...node.next].map(([segment, child]) => (first ? '' : '/') + escapePattern(segment) + emitTrie(child, false));
  if (node.end) branches.push('(?:/|$)');
  return branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}

/**
 * One regex, a trie of the folded roots by segment, that matches a folded path at or under any
 * of them: shared parents are compared once, however many roots a list has.
 */
function mergeRoots(roots: readonly string[]): RegExp | 'all' | undefined {
  if (roots.length === 0) return undefined;
  if (roots.includes('/')) return 'all';
  const top: TrieNode = { end: false, next: new Map() };
  for (const root of roots) {
    let node = top;
    for (const segment of root.split('/')) {
      let child = node.next.get(segment);
      if (child === undefined) {
        child = { end: false, next: new Map() };
        node.next.set(segment, child);
      }
      node = child;
    }
    node.end = true;
  }
  // Literal roots only: code units compare the same as code points, and the plain flags compile fastest.
  return regexOf(`^${emitTrie(top, true)}`, '');
}

interface MatcherParts {
  roots: string[];
  patterns: string[];
}

function collect(matchers: readonly PathMatcher[], platform: NodeJS.Platform, what: string): MatcherParts {
  const parts: MatcherParts = { roots: [], patterns: [] };
  for (const m of matchers) {
    if ('path' in m && typeof m.path === 'string') {
      assertRealPathShape(m.path, platform, what);
      parts.roots.push(foldPath(m.path, platform));
    } else if ('pattern' in m && typeof m.pattern === 'string') {
      validatePattern(m.pattern);
      parts.patterns.push(m.pattern);
    } else {
      throw new TypeError(`${what} must be { path: string } or { pattern: string }, got ${JSON.stringify(m)}`);
    }
  }
  return parts;
}

function matcherOf(parts: MatcherParts, platform: NodeJS.Platform): (p: PreparedPath) => boolean {
  const roots = mergeRoots(parts.roots);
  const patterns = mergePatterns(parts.patterns, platform);
  if (roots === 'all') return () => true;
  if (roots === undefined && patterns === undefined) return () => false;
  if (roots === undefined) return (p) => patterns!(p.slashed);
  if (patterns === undefined) return (p) => roots.test(p.folded);
  return (p) => roots.test(p.folded) || patterns(p.slashed);
}

/**
 * Compiles rules once: every pattern validated, every root checked to be absolute and folded.
 * Rules without carve-outs are merged so a path is tested against few regexes; a rule with
 * `except` keeps its own carve-outs, which always win inside that rule only.
 * Throws {@link ReachInputError} for a pattern outside the allowed subset or a relative root.
 */
export function compileRules(rules: readonly PathRule[], platform: NodeJS.Platform): CompiledRules {
  const plain: PathMatcher[] = [];
  const carvedMains: PathMatcher[] = [];
  const carved: Array<{ rule: (p: PreparedPath) => boolean; except: (p: PreparedPath) => boolean }> = [];
  for (const rule of rules) {
    const own: PathMatcher = 'path' in rule ? { path: rule.path } : { pattern: rule.pattern };
    if (rule.except === undefined || rule.except.length === 0) {
      plain.push(own);
    } else {
      carvedMains.push(own);
      carved.push({
        rule: matcherOf(collect([own], platform, 'a rule root'), platform),
        except: matcherOf(collect(rule.except, platform, 'an except root'), platform),
      });
    }
  }
  const plainMatch = matcherOf(collect(plain, platform, 'a rule root'), platform);
  // Most paths are in no carved rule: one merged test of their roots and patterns rules them all out.
  const anyCarved = matcherOf(collect(carvedMains, platform, 'a rule root'), platform);
  return {
    platform,
    test(p) {
      if (plainMatch(p)) return true;
      if (!anyCarved(p)) return false;
      for (const c of carved) if (c.rule(p) && !c.except(p)) return true;
      return false;
    },
  };
}

const compiledLists = new WeakMap<readonly PathRule[], Map<NodeJS.Platform, CompiledRules>>();

/**
 * {@link compileRules}, cached per rules array and platform: lists built once at activation are
 * compiled once, however many reaches use them. Treat a list handed in here as immutable.
 */
export function compileList(rules: readonly PathRule[], platform: NodeJS.Platform): CompiledRules {
  let byPlatform = compiledLists.get(rules);
  if (byPlatform === undefined) {
    byPlatform = new Map();
    compiledLists.set(rules, byPlatform);
  }
  let compiled = byPlatform.get(platform);
  if (compiled === undefined) {
    compiled = compileRules(rules, platform);
    byPlatform.set(platform, compiled);
  }
  return compiled;
}

const compiledOne = new WeakMap<PathRule, CompiledRules[]>();

/** {@link compileRules} for one rule, cached per rule object and platform. */
export function compileRule(rule: PathRule, platform: NodeJS.Platform): CompiledRules {
  let all = compiledOne.get(rule);
  if (all === undefined) {
    all = [];
    compiledOne.set(rule, all);
  }
  let compiled = all.find((c) => c.platform === platform);
  if (compiled === undefined) {
    compiled = compileRules([rule], platform);
    all.push(compiled);
  }
  return compiled;
}

/** Rules compiled apart, tested as one list (in order, first covering wins). */
export function unionRules(parts: readonly CompiledRules[], platform: NodeJS.Platform): CompiledRules {
  return {
    platform,
    test: (p) => parts.some((c) => c.test(p)),
  };
}

/**
 * Whether `rule` covers `path` on `platform`. `{ path }` covers that path and everything under it,
 * never a sibling that merely shares a prefix (`/a/b` does not cover `/a/bc`); `{ pattern }` must
 * match the whole path; a path covered by one of `except` is not covered. On darwin and win32 case
 * does not count, on win32 backslashes count as slashes. `path` must be a real, absolute path.
 */
export function matchesRule(rule: PathRule, path: string, platform: NodeJS.Platform): boolean {
  return compileRule(rule, platform).test(preparePath(path, platform));
}

import { assertRealPathShape, foldPath, foldsCase, isUnder, slashPath } from './path.js';
import { validatePattern } from './pattern.js';
import type { PathMatcher, PathRule } from './rule.js';

/** A path prepared once for many rule tests: slashed for patterns, folded for `{ path }` roots. */
export interface PreparedPath {
  /** Backslashes as slashes (win32), no repeated or trailing slash. */
  readonly slashed: string;
  /** `slashed`, lower-cased where the platform compares without case. */
  readonly folded: string;
}

/** Prepares a path for {@link CompiledRules.test}; the same form the rules were compiled to. */
export function preparePath(path: string, platform: NodeJS.Platform): PreparedPath {
  const slashed = slashPath(path, platform);
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

/** Whether `|` appears outside every group and class, where it would split a merged pattern. */
function hasTopLevelAlternation(pattern: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
}

/** The part after `^.*\/` and before `$` when a pattern has exactly that shape, else undefined. */
function anywhereTail(pattern: string): string | undefined {
  if (!pattern.startsWith(ANYWHERE) || !pattern.endsWith('$') || hasTopLevelAlternation(pattern)) return undefined;
  const tail = pattern.slice(ANYWHERE.length, -1);
  // An escaped '$' or a quantifier right after the slash would change meaning when cut out.
  if (tail.length === 0 || /^[*+?{]/.test(tail) || /(^|[^\\])(\\\\)*\\$/.test(tail)) return undefined;
  return tail;
}

/**
 * Patterns of the form `^.*\/TAIL$` share their prefix, so one regex tries every tail at each
 * slash instead of one regex per rule scanning the whole path: the hot path of every write.
 */
function mergePatterns(patterns: readonly string[], platform: NodeJS.Platform): RegExp[] {
  const tails: string[] = [];
  const rest: string[] = [];
  for (const p of patterns) {
    const tail = anywhereTail(p);
    if (tail === undefined) rest.push(p);
    else tails.push(`(?:${tail})`);
  }
  const out: RegExp[] = [];
  if (tails.length > 0) out.push(new RegExp(`^.*/(?:${tails.join('|')})$`, flagsOf(platform)));
  if (rest.length > 0) out.push(new RegExp(anchored(rest.map((p) => `(?:${p})`).join('|')), flagsOf(platform)));
  return out;
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
  const { roots } = parts;
  const regexes = mergePatterns(parts.patterns, platform);
  return (p) => {
    for (const root of roots) if (isUnder(p.folded, root)) return true;
    for (const re of regexes) if (re.test(p.slashed)) return true;
    return false;
  };
}

/**
 * Compiles rules once: every pattern validated, every root checked to be absolute and folded.
 * Rules without carve-outs are merged so a path is tested against few regexes; a rule with
 * `except` keeps its own carve-outs, which always win inside that rule only.
 * Throws {@link ReachInputError} for a pattern outside the allowed subset or a relative root.
 */
export function compileRules(rules: readonly PathRule[], platform: NodeJS.Platform): CompiledRules {
  const plain: PathMatcher[] = [];
  const carved: Array<{ rule: (p: PreparedPath) => boolean; except: (p: PreparedPath) => boolean }> = [];
  for (const rule of rules) {
    const own: PathMatcher = 'path' in rule ? { path: rule.path } : { pattern: rule.pattern };
    if (rule.except === undefined || rule.except.length === 0) {
      plain.push(own);
    } else {
      carved.push({
        rule: matcherOf(collect([own], platform, 'a rule root'), platform),
        except: matcherOf(collect(rule.except, platform, 'an except root'), platform),
      });
    }
  }
  const plainMatch = matcherOf(collect(plain, platform, 'a rule root'), platform);
  return {
    platform,
    test(p) {
      if (plainMatch(p)) return true;
      for (const c of carved) if (c.rule(p) && !c.except(p)) return true;
      return false;
    },
  };
}

const compiledOne = new WeakMap<PathRule, Map<NodeJS.Platform, CompiledRules>>();

/** {@link compileRules} for one rule, cached per rule object and platform. */
export function compileRule(rule: PathRule, platform: NodeJS.Platform): CompiledRules {
  let byPlatform = compiledOne.get(rule);
  if (byPlatform === undefined) {
    byPlatform = new Map();
    compiledOne.set(rule, byPlatform);
  }
  let compiled = byPlatform.get(platform);
  if (compiled === undefined) {
    compiled = compileRules([rule], platform);
    byPlatform.set(platform, compiled);
  }
  return compiled;
}

/**
 * Whether `rule` covers `path` on `platform`. `{ path }` covers that path and everything under it,
 * never a sibling that merely shares a prefix (`/a/b` does not cover `/a/bc`); `{ pattern }` must
 * match the whole path; a path covered by one of `except` is not covered. On darwin and win32 case
 * does not count, on win32 backslashes count as slashes. `path` must be a real, absolute path.
 */
export function matchesRule(rule: PathRule, path: string, platform: NodeJS.Platform): boolean {
  assertRealPathShape(path, platform, 'the path');
  return compileRule(rule, platform).test(preparePath(path, platform));
}

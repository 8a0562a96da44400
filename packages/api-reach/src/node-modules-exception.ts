import { ReachInputError } from './errors.js';
import { BARE_REPO_HEAD_PATTERN, LANDING_TABLE, type LandingEntry } from './landing-table.js';
import { escapePattern, slashPath } from './path.js';
import { topLevelAlternatives } from './pattern.js';
import { patternTokens } from './pattern-tokens.js';
import type { PathMatcher, PathRule } from './rule.js';

/**
 * A whole-path pattern without its anchors, as a group that can start a longer pattern. Throws
 * {@link ReachInputError} for an anchor anywhere but at the ends of a top-level alternative: such
 * a pattern cannot be extended, so the node_modules exception could not be kept from lifting it.
 */
export function patternBody(pattern: string): string {
  const bodies = topLevelAlternatives(pattern).map((alt) => {
    const tokens = patternTokens(alt);
    const from = tokens[0]?.kind === 'anchor' && tokens[0].text === '^' ? 1 : 0;
    const last = tokens.at(-1);
    const to = tokens.length > from && last?.kind === 'anchor' && last.text === '$' ? tokens.length - 1 : tokens.length;
    if (tokens.slice(from, to).some((t) => t.kind === 'anchor')) {
      throw new ReachInputError(
        'pattern',
        `the landing pattern '${pattern}' has an anchor (^ or $) inside it; anchors may only open and close the pattern or one of its top-level alternatives. Write it without the inner anchor.`,
      );
    }
    return alt.slice(from, to < tokens.length ? tokens[to]!.start : alt.length);
  });
  return `(?:${bodies.join('|')})`;
}

/** A path's literal as a pattern body (no trailing slash, so `/` becomes the empty body). */
function pathBody(path: string, platform: NodeJS.Platform): string {
  return escapePattern(slashPath(path, platform).replace(/\/+$/, ''));
}

const NODE_MODULES_TAIL = '/(?:.*/)?node_modules(?:/.*)?';

/** The landings the exception never lifts, wherever they are: git's, and the bare-repository `HEAD`. */
const STAYS: readonly PathMatcher[] = [
  ...(LANDING_TABLE as readonly LandingEntry[]).flatMap((e) => (e.inNodeModules === 'stays' && 'anywhere' in e.place ? [{ pattern: `^.*/${e.place.anywhere}$` }] : [])),
  { pattern: BARE_REPO_HEAD_PATTERN },
];

const aboveCache = new WeakMap<readonly PathRule[], Map<NodeJS.Platform, PathMatcher>>();

/** Paths with a landing at or above one of their `node_modules` directories (each landing itself, not its carve-outs: stricter). */
function landingAboveNodeModules(landing: readonly PathRule[], platform: NodeJS.Platform): PathMatcher {
  let byPlatform = aboveCache.get(landing);
  if (byPlatform === undefined) {
    byPlatform = new Map();
    aboveCache.set(landing, byPlatform);
  }
  let matcher = byPlatform.get(platform);
  if (matcher === undefined) {
    const bodies = landing.map((r) => ('path' in r ? pathBody(r.path, platform) : patternBody(r.pattern)));
    matcher = { pattern: `^(?:${bodies.join('|')})${NODE_MODULES_TAIL}$` };
    byPlatform.set(platform, matcher);
  }
  return matcher;
}

/**
 * The node_modules write exception: package contents under the writable roots that happen to look
 * like landings (a package's `AGENTS.md`, its `.husky/`) are writable again, but only landings
 * that lie inside a `node_modules` directory. One rule, expressible in every backend's layers:
 * `node_modules` under any root, except where a landing lies at or above that `node_modules`
 * (`<root>/.git/hooks/node_modules/x`, `<data>/self/…/node_modules/…`) and except git's landings
 * and the bare-repository `HEAD`, which git obeys in any directory. Undefined without roots.
 */
export function nodeModulesException(roots: readonly string[], landing: readonly PathRule[], platform: NodeJS.Platform): PathRule | undefined {
  if (roots.length === 0) return undefined;
  const anyRoot = roots.map((r) => pathBody(r, platform)).join('|');
  return {
    pattern: `^(?:${anyRoot})${NODE_MODULES_TAIL}$`,
    except: [landingAboveNodeModules(landing, platform), ...STAYS],
  };
}

import { ReachInputError } from './errors.js';
import { LANDING_TABLE, type LandingEntry } from './landing-table.js';
import { patternBody } from './node-modules-exception.js';
import { assertRealPathShape, escapePattern, foldsCase, joinPath, slashPath } from './path.js';
import { validatePattern } from './pattern.js';
import type { PathRule } from './rule.js';
import { type XdgBaseDirs, xdgAliasOf, xdgPatternAliasOf } from './xdg-dirs.js';

/** A landing added by configuration: a path (with everything under it) or a whole-path pattern. */
export type ExtraLanding = ({ readonly path: string } | { readonly pattern: string }) & { readonly reason?: string };

/** What the table's entries are placed with; every path is a real, absolute, slashed path. */
export interface LandingRulesInput {
  readonly platform: NodeJS.Platform;
  readonly home: string;
  readonly self: string;
  /** The instance's data directory (an `anywhere` entry marked `notTheDataDir` does not cover it). */
  readonly data: string;
  readonly userName?: string;
  readonly extra?: readonly ExtraLanding[];
  /** The XDG base directories the user set elsewhere: an entry under a home default is also one under the set directory. */
  readonly xdg?: XdgBaseDirs;
}

function withoutTrailingSlash(path: string): string {
  return path.replace(/\/+$/, '');
}

/** Whether the data directory or one of its ancestors is itself named like the entry. */
function dataDirLooksLike(tail: string, data: string, platform: NodeJS.Platform): boolean {
  const re = new RegExp(`^(?:.*/${tail})$`, foldsCase(platform) ? 'isu' : 'su');
  const segments = slashPath(data, platform).split('/');
  for (let i = 1; i <= segments.length; i++) if (re.test(segments.slice(0, i).join('/'))) return true;
  return false;
}

/** The rules of one table entry on one host (none when it names the user and the name is unknown). */
export function rulesOfEntry(entry: LandingEntry, input: LandingRulesInput): PathRule[] {
  const { place } = entry;
  if ('self' in place) return [{ path: input.self }];
  if ('anywhere' in place) {
    const rule: PathRule = { pattern: `^.*/${place.anywhere}$` };
    if (entry.notTheDataDir !== true || !dataDirLooksLike(place.anywhere, input.data, input.platform)) return [rule];
    // The instance's own data directory so named is not a project's; one inside it is.
    const data = withoutTrailingSlash(slashPath(input.data, input.platform));
    return [
      { ...rule, except: [{ path: input.data }] },
      { pattern: `^${escapePattern(data)}/(?:.*/)?${place.anywhere}$` },
    ];
  }
  if ('homePattern' in place) {
    const rules: PathRule[] = [{ pattern: `^${escapePattern(withoutTrailingSlash(slashPath(input.home, input.platform)))}/${place.homePattern}$` }];
    if (input.xdg !== undefined) for (const pattern of xdgPatternAliasOf(place.homePattern, input.home, input.xdg, input.platform)) rules.push({ pattern });
    return rules;
  }
  const rels: readonly string[] = typeof place.home === 'string' ? [place.home] : place.home;
  const rules: PathRule[] = [];
  for (const rel of rels) {
    if (rel.includes('{user}') && (input.userName === undefined || input.userName === '' || /[/\\]/.test(input.userName))) continue;
    const named = rel.replaceAll('{user}', input.userName ?? '');
    const aliases = input.xdg === undefined ? [] : xdgAliasOf(named, input.home, input.xdg, input.platform);
    for (const path of [joinPath(input.home, named), ...aliases]) {
      rules.push(place.tree ? { path } : { pattern: `^${escapePattern(path)}$` });
    }
  }
  return rules;
}

function extraRule(extra: ExtraLanding, index: number, platform: NodeJS.Platform): PathRule {
  const where = `landings[${index}]`;
  try {
    if ('path' in extra && typeof extra.path === 'string') return { path: assertRealPathShape(extra.path, platform, where) };
    if ('pattern' in extra && typeof extra.pattern === 'string') {
      validatePattern(extra.pattern);
      patternBody(extra.pattern); // the node_modules exception must be able to extend it
      return { pattern: extra.pattern };
    }
  } catch (error) {
    if (error instanceof ReachInputError) {
      throw new ReachInputError(error.problem, `the extra landing ${where} is refused: ${error.message} Fix it in the reach plugin's 'landings' config.`);
    }
    throw error;
  }
  throw new ReachInputError('request', `the extra landing ${where} must be { path } or { pattern }, got ${JSON.stringify(extra)}.`);
}

/**
 * The landing list of a host: every entry of {@link LANDING_TABLE} for its platform, in table
 * order, then the configured extra landings. Throws {@link ReachInputError} for an extra landing
 * that is not an absolute path or not a pattern every backend can translate.
 */
export function landingRules(input: LandingRulesInput): PathRule[] {
  const rules: PathRule[] = [];
  for (const entry of LANDING_TABLE as readonly LandingEntry[]) {
    if (entry.platforms !== undefined && !entry.platforms.includes(input.platform)) continue;
    rules.push(...rulesOfEntry(entry, input));
  }
  (input.extra ?? []).forEach((extra, i) => {
    rules.push(extraRule(extra, i, input.platform));
  });
  return rules;
}

function anywhereRulesOf(group: LandingEntry['group']): readonly PathRule[] {
  return Object.freeze(
    (LANDING_TABLE as readonly LandingEntry[]).flatMap((e) =>
      e.group === group && 'anywhere' in e.place && e.notTheDataDir !== true ? [{ pattern: `^.*/${e.place.anywhere}$` }] : [],
    ),
  );
}

/** The git items of every repository, by name (the table's `git` group). */
export const GIT_LANDINGS: readonly PathRule[] = anywhereRulesOf('git');

/** Project files that tools execute or obey on their own (the table's `project` group, less the project `.aalis`). */
export const PROJECT_LANDINGS: readonly PathRule[] = anywhereRulesOf('project');

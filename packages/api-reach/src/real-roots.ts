import type { ProtectedLists } from './lists.js';
import { foldPath, isUnder, slashPath } from './path.js';
import type { PathMatcher, PathRule } from './rule.js';

function rebase(m: PathMatcher, from: string, to: string, platform: NodeJS.Platform): PathMatcher {
  if (!('path' in m)) return m;
  const p = slashPath(m.path, platform);
  if (!isUnder(foldPath(p, platform), foldPath(from, platform))) return m;
  return { path: to + p.slice(slashPath(from, platform).length) };
}

function withReal(rules: readonly PathRule[], realOf: (path: string) => string | undefined, platform: NodeJS.Platform): PathRule[] {
  const out: PathRule[] = [];
  for (const rule of rules) {
    out.push(rule);
    if (!('path' in rule)) continue;
    const real = realOf(rule.path);
    if (real === undefined || foldPath(real, platform) === foldPath(rule.path, platform)) continue;
    const to = slashPath(real, platform);
    const moved: PathRule =
      rule.except === undefined
        ? { path: to }
        : { path: to, except: rule.except.map((e) => rebase(e, rule.path, to, platform)) };
    out.push(moved);
  }
  return out;
}

/**
 * Adds, for every `{ path }` rule whose root is spelled differently from its real path (a symlink
 * on the way), the same rule rooted at the real path, with the carve-outs under the root moved
 * along; pattern rules stay as they are. `realOf` touches the file system, so the caller (the
 * reach plugin, at activation) takes the real paths; later changes to the links are not followed.
 * `realOf` answers `undefined` for a path that does not exist.
 */
export function withRealRoots(lists: ProtectedLists, realOf: (path: string) => string | undefined): ProtectedLists {
  const { platform } = lists;
  return {
    platform,
    control: withReal(lists.control, realOf, platform),
    landing: withReal(lists.landing, realOf, platform),
    denyRead: withReal(lists.denyRead, realOf, platform),
  };
}

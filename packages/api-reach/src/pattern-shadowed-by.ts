import { patternLiteral } from './pattern-literal.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/**
 * The first deny pattern (read-deny, write-deny, control) whose place a symlink at `link` would
 * send where it points: one whose literal start lies strictly below `link` (a link at `~/.vscode`
 * above `^~/\.vscode/extensions(?:/.*)?$`). `{ path }` rules are {@link namedPathsUnder}'s; a
 * pattern not anchored at the root names no place and is left out. A link *within* a pattern's
 * literal folder is not judged by it: one that matches at any depth (a flake's `.nix` files) would
 * refuse every link in that folder (pnpm's, a virtualenv's, nix's own `result`; found by an
 * attack, h114, on a first version that did).
 */
export function patternShadowedBy(policy: SandboxPolicy, link: string): string | undefined {
  return placesOf(policy).find(({ literal }) => literal.startsWith(`${link}/`) && literal.length > link.length + 1)?.pattern;
}

/** A policy's anchored deny patterns with their literal starts, read once per policy object (a commit asks for every link it meets). */
const PLACES = new WeakMap<SandboxPolicy, readonly { readonly pattern: string; readonly literal: string }[]>();
function placesOf(policy: SandboxPolicy): readonly { readonly pattern: string; readonly literal: string }[] {
  let places = PLACES.get(policy);
  if (places === undefined) {
    places = [...policy.readDeny, ...policy.writeDeny, ...policy.controlDeny].flatMap((rule) => {
      if (!('pattern' in rule)) return [];
      const { literal, exact } = patternLiteral(rule.pattern);
      return literal === '' || exact ? [] : [{ pattern: rule.pattern, literal }];
    });
    PLACES.set(policy, places);
  }
  return places;
}

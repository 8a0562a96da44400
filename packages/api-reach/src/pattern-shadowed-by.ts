import { pathIsUnder } from './path.js';
import { patternLiteral } from './pattern-literal.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/**
 * The first deny pattern (read-deny, write-deny, control) whose matches a symlink at `link` would
 * send where it points: one whose literal start lies below `link` (a link at `sub/` above
 * `^/w/sub/nix/.*\.nix$`), or one that can match below `link` where `link` lies in its literal
 * start (`sub/nix` under a flake's `^/w/sub/(?:.*\/)?[^/]*\.nix$`). `{ path }` rules are
 * {@link namedPathsUnder}'s; a pattern not anchored at the root names no place and is left out.
 * Found by an attack (h113): `ln -s ../evil sub/nix` in a flake folder sent nix's import of
 * `./nix/shell.nix` to the command's file, and no named path lay under the link.
 */
export function patternShadowedBy(policy: SandboxPolicy, link: string, platform: NodeJS.Platform = 'linux'): string | undefined {
  for (const rule of [...policy.readDeny, ...policy.writeDeny, ...policy.controlDeny]) {
    if (!('pattern' in rule)) continue;
    const { literal, exact, whole, deeper } = patternLiteral(rule.pattern);
    if (literal === '' || exact) continue;
    const above = literal.startsWith(`${link}/`) && literal.length > link.length + 1;
    // where the literal ends: a whole name (the link at or below it), a folder (below it), mid-name (`p10k-`: any name it starts)
    const folder = literal.endsWith('/') ? literal.slice(0, -1) : undefined;
    const within = deeper && (whole ? pathIsUnder(link, literal, platform) : folder !== undefined ? link !== folder && pathIsUnder(link, folder, platform) : link.startsWith(literal));
    if (above || within) return rule.pattern;
  }
  return undefined;
}

import { pathIsUnder } from './path.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/**
 * The paths the policy's `{ path }` rules name (read-deny, write-deny, control) strictly under
 * `path` that `isProtected` judges protected. A folder or a link moved or made at `path` puts what
 * it holds, or what it points at, at those paths: with `~/.npm` missing, a folder moved there
 * brought its own `_npx`, packages npx runs (found by attacks on the sandbox's commit and on the
 * host tools). One lookup for both; each judges with its own evaluator.
 */
export function namedPathsUnder(policy: SandboxPolicy, path: string, isProtected: (named: string) => boolean, platform: NodeJS.Platform = 'linux'): string[] {
  return namedPathsOf(policy).filter((p) => p !== path && pathIsUnder(p, path, platform) && isProtected(p));
}

/** A policy's named paths, read once per policy object (a commit asks for every link it meets). */
const NAMED = new WeakMap<SandboxPolicy, readonly string[]>();
function namedPathsOf(policy: SandboxPolicy): readonly string[] {
  let named = NAMED.get(policy);
  if (named === undefined) {
    named = [...new Set([...policy.readDeny, ...policy.writeDeny, ...policy.controlDeny].flatMap((r) => ('path' in r ? [r.path] : [])))];
    NAMED.set(policy, named);
  }
  return named;
}

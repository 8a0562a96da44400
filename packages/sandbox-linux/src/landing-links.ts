import { type LandingRule, landingExtraRules } from '@aalis/core';
import type { SandboxPolicy } from '@aalis/api-reach';
import { placeholderCandidates } from './placeholders.js';
import { isWithin } from './rule-match.js';

/**
 * `policy` with core's {@link landingExtraRules} added to its landings (landing symlinks, nested
 * repositories, what `.envrc` files load), for the commit only (the sandbox's own view is unchanged).
 */
export function withLandingLinks(policy: SandboxPolicy, candidates: Iterable<string>, protectedPath: (path: string) => boolean, said?: (folder: string, why: string) => void): SandboxPolicy {
  const inRoot = (p: string) => policy.write.some((root) => p !== root && isWithin(p, root));
  const extra = landingExtraRules({ write: policy.write, inRoot, candidates, protectedPath, said });
  if (extra.length === 0) return policy;
  // a strict one (a typed command's name in a node_modules/.bin on PATH) beats the node_modules write exception, as the control plane does
  const plain = (r: LandingRule) => ('path' in r ? { path: r.path } : { pattern: r.pattern });
  const strict = extra.filter((r) => r.strict === true).map(plain);
  return { ...policy, writeDeny: [...policy.writeDeny, ...extra.filter((r) => r.strict !== true).map(plain)], ...(strict.length > 0 ? { controlDeny: [...policy.controlDeny, ...strict] } : {}) };
}

/** The paths a commit checks for landing symlinks (and landing folders, for the links in them): the scan's matches, the paths the policy's landings name, the landing names by the cwd. */
export function landingLinkCandidates(policy: SandboxPolicy, cwd: string, found: readonly { readonly path: string; readonly via?: string }[], dangling: readonly string[] = []): string[] {
  const named = [...policy.writeDeny, ...policy.controlDeny].flatMap((r) => ('path' in r ? [r.path] : []));
  // the landing names where a new one is looked for (CLAUDE.md, .git/hooks, …): a dangling link there is no match of the scan's
  return [...new Set([...found.flatMap((f) => (f.via === undefined ? [f.path] : [f.via])), ...named, ...dangling, ...placeholderCandidates(policy, cwd)])];
}

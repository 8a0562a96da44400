import { ReachInputError } from './errors.js';
import { compileRules, preparePath } from './match.js';
import { nodeModulesException } from './node-modules-exception.js';
import { assertRealPathShape, escapePattern, foldPath, isUnder } from './path.js';
import type { Reach } from './reach.js';
import type { SandboxGrants, SandboxPolicy } from './sandbox-policy.js';

function unique(paths: readonly string[], platform: NodeJS.Platform): string[] {
  const seen = new Set<string>();
  return paths.filter((p) => {
    const key = foldPath(p, platform);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The sandbox policy of a reach that runs commands in the sandbox (readonly, workspace), with
 * what was approved for this one command. Layers, later winning, in the order every backend
 * translates them: reads default → `readDeny` (the deny-read list) → `readAllowWithin` (the
 * session temp); writes default deny → `write` (the writable roots plus `grants.writePaths`) →
 * `writeDeny` (the landings, also under granted paths) → `writeExceptions` (landings inside a
 * `node_modules` under the reach's own writable roots, never one at or above that `node_modules`
 * nor git's, see `nodeModulesException`; and each `grants.landingPaths` exactly, nothing under
 * it) → `controlDeny` (the control plane, which no grant releases). Network is on in
 * `workspace`, off in `readonly` unless `grants.network`. Throws {@link ReachInputError} for a
 * reach that runs on the host or has no local effect: it has no sandbox policy.
 */
export function sandboxPolicyOf(reach: Reach, grants: SandboxGrants = {}): SandboxPolicy {
  if (reach.exec !== 'sandbox') {
    const why =
      reach.exec === 'none'
        ? 'this call has no local effect, so it runs no command at all'
        : `the ${reach.tier} tier runs commands on the host, not in the sandbox`;
    throw new ReachInputError('no-sandbox-policy', `there is no sandbox policy for this reach: ${why}.`);
  }
  const { platform } = reach.lists;
  const writePaths = (grants.writePaths ?? []).map((p) => assertRealPathShape(p, platform, 'a granted write path'));
  const landingPaths = (grants.landingPaths ?? []).map((p) => assertRealPathShape(p, platform, 'a granted landing path'));
  const write = unique([...reach.writableRoots, ...writePaths], platform);
  const nodeModules = nodeModulesException(unique(reach.writableRoots, platform), reach.lists.landing, platform);
  return Object.freeze({
    readDeny: reach.lists.denyRead,
    readAllowWithin: Object.freeze([reach.sessionTmp]),
    write: Object.freeze(write),
    writeDeny: reach.lists.landing,
    writeExceptions: Object.freeze([
      ...(nodeModules === undefined ? [] : [nodeModules]),
      ...landingPaths.map((p) => ({ pattern: `^${escapePattern(p)}$` })),
    ]),
    controlDeny: reach.lists.control,
    network: reach.tier === 'workspace' || grants.network === true ? 'on' : 'off',
    localPorts: reach.localPorts,
    unixSockets: Object.freeze(unique([...write, reach.sessionTmp], platform)),
    tmp: reach.sessionTmp,
  });
}

/**
 * Whether a policy lets a sandboxed command read or write a real path, evaluating the layers in
 * their order on `platform`: the reference every backend's translation is checked against.
 */
export function sandboxPolicyAllows(policy: SandboxPolicy, effect: 'read' | 'write', path: string, platform: NodeJS.Platform): boolean {
  assertRealPathShape(path, platform, 'the path');
  const p = preparePath(path, platform);
  const within = (roots: readonly string[]) => roots.some((r) => isUnder(p.folded, foldPath(r, platform)));
  if (effect === 'read') {
    if (within(policy.readAllowWithin)) return true;
    return !compileRules(policy.readDeny, platform).test(p);
  }
  // Each layer that matches sets the answer; the last one to match wins.
  let allowed = within(policy.write);
  if (compileRules(policy.writeDeny, platform).test(p)) allowed = false;
  if (compileRules(policy.writeExceptions, platform).test(p)) allowed = true;
  if (compileRules(policy.controlDeny, platform).test(p)) allowed = false;
  return allowed;
}

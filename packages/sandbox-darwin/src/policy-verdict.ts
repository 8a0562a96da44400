import { type PathRule, type SandboxPolicy, sandboxPolicyAllows } from '@aalis/api-reach';
import { darwinPath, darwinPatternPrefix } from './darwin-path.js';

// The same layers as the profile, evaluated by api-reach's reference evaluator on darwin: what
// the generated profile decides for one path. Used to tell a refused write from a refused read
// in a command's stderr, and by test:mac to check the kernel agrees.
// Paths and pattern prefixes are respelled as the profile spells them (/tmp → /private/tmp).

const respelled = new WeakMap<PathRule, PathRule>();

function spell(rule: PathRule): PathRule {
  let out = respelled.get(rule);
  if (out === undefined) {
    const matcher = 'path' in rule ? { path: darwinPath(rule.path, 'verdict') } : { pattern: darwinPatternPrefix(rule.pattern) };
    const except = rule.except?.map((m) => ('path' in m ? { path: darwinPath(m.path, 'verdict') } : { pattern: darwinPatternPrefix(m.pattern) }));
    out = except === undefined ? matcher : { ...matcher, except };
    respelled.set(rule, out);
  }
  return out;
}

const respelledPolicies = new WeakMap<SandboxPolicy, SandboxPolicy>();

/** The policy with every path and pattern prefix spelled as the profile spells it. */
function respell(policy: SandboxPolicy): SandboxPolicy {
  let out = respelledPolicies.get(policy);
  if (out === undefined) {
    const paths = (list: readonly string[]) => list.map((p) => darwinPath(p, 'verdict'));
    out = {
      ...policy,
      readDeny: policy.readDeny.map(spell),
      readAllowWithin: paths(policy.readAllowWithin),
      write: paths(policy.write),
      writeDeny: policy.writeDeny.map(spell),
      writeExceptions: policy.writeExceptions.map(spell),
      controlDeny: policy.controlDeny.map(spell),
      unixSockets: paths(policy.unixSockets),
    };
    respelledPolicies.set(policy, out);
  }
  return out;
}

/** Whether the profile for `policy` lets a command read `path` (a real path). */
export function policyAllowsRead(policy: SandboxPolicy, path: string): boolean {
  return sandboxPolicyAllows(respell(policy), 'read', darwinPath(path, 'verdict'), 'darwin');
}

/** Whether the profile for `policy` lets a command write `path` (a real path). */
export function policyAllowsWrite(policy: SandboxPolicy, path: string): boolean {
  return sandboxPolicyAllows(respell(policy), 'write', darwinPath(path, 'verdict'), 'darwin');
}

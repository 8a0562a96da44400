import { matchesRule, type PathRule, type SandboxPolicy } from '@aalis/api-reach';
import { darwinPath, darwinPatternPrefix } from './darwin-path.js';

// The same layers as the profile, evaluated with api-reach's matchesRule on darwin (whole-path
// patterns, no case): what the generated profile decides for one path. Used to tell a refused
// write from a refused read in a command's stderr, and by test:mac to check the kernel agrees.
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

function ruleCovers(rule: PathRule, path: string): boolean {
  return matchesRule(spell(rule), path, 'darwin');
}

type Layer = { allow: boolean; rules: readonly PathRule[] };

function decide(layers: readonly Layer[], initial: boolean, path: string): boolean {
  let verdict = initial;
  for (const layer of layers) if (layer.rules.some((rule) => ruleCovers(rule, path))) verdict = layer.allow;
  return verdict;
}

const roots = (paths: readonly string[]): PathRule[] => paths.map((path) => ({ path }));

/** Whether the profile for `policy` lets a command read `path` (a real path). */
export function policyAllowsRead(policy: SandboxPolicy, path: string): boolean {
  const spelled = darwinPath(path, 'verdict');
  return decide(
    [
      { allow: false, rules: policy.readDeny },
      { allow: true, rules: roots(policy.readAllowWithin) },
    ],
    true,
    spelled,
  );
}

/** Whether the profile for `policy` lets a command write `path` (a real path). */
export function policyAllowsWrite(policy: SandboxPolicy, path: string): boolean {
  const spelled = darwinPath(path, 'verdict');
  return decide(
    [
      { allow: true, rules: roots(policy.write) },
      { allow: false, rules: policy.writeDeny },
      { allow: true, rules: policy.writeExceptions },
      { allow: false, rules: policy.controlDeny },
    ],
    false,
    spelled,
  );
}

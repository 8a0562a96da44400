import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { landingNames, namedPathsUnder, pathIsUnder, type ReachCredential, type SandboxPolicy } from '@aalis/api-reach';
import { LANDING_FOLDER_LINKS_MAX, landingLinkChains } from '@aalis/core';

/**
 * The landings that are symlinks whose way `path` lies on: a name they are resolved through
 * (replaced, it redirects them) or where they lead (written, it is their content). Looked for where
 * a landing is by its name in the credential's main directory (`CLAUDE.md`, `.git/hooks/*`, …) and
 * at the paths the policy's landings name (`~/.bashrc`), with the sandbox's commit's lookup (core's
 * `landingLinkChains`). A write to `docs/agent.md` when `CLAUDE.md -> docs/agent.md` is then asked
 * for as the landing it is (the same seam the sandbox's commit closes in sandbox-linux's
 * `landing-links.ts`, found by an attack there).
 */
export function landingLinksThrough(credential: ReachCredential, path: string): string[] {
  let policy: SandboxPolicy | undefined;
  try {
    policy = credential.sandboxPolicy();
  } catch {
    policy = undefined; // a credential without a sandbox (the host tiers): the landing names alone
  }
  const candidates = new Set<string>();
  if (credential.home !== undefined) {
    for (const name of landingNames()) candidates.add(join(credential.home, name));
    // and every entry of the main directory: a landing the table gives no name (`.lintstagedrc.json
    // -> config/lint.json`, `app.code-workspace -> ws/app.json`) was not looked for, and its file
    // was written unasked (h106); landingLinkChains takes only those that are landings
    for (const name of entriesOf(credential.home)) candidates.add(join(credential.home, name));
  }
  for (const rule of policy === undefined ? [] : [...policy.writeDeny, ...policy.controlDeny]) if ('path' in rule) candidates.add(rule.path);
  const found: string[] = [];
  for (const { link, chain } of landingLinkChains(candidates, (p) => !credential.allows('write', p))) {
    if (chain.through.includes(path) || (chain.target !== undefined && pathIsUnder(path, chain.target, process.platform))) found.push(link);
  }
  return found;
}

/**
 * The paths the policy names strictly under `path` that may not be written or read (api-reach's
 * `namedPathsUnder`, which the sandbox's commit asks too): a folder or a link moved to `path` puts
 * what it holds, or what it points at, there. Each is asked for as a write, as the landing it is.
 */
export function protectedPathsUnder(credential: ReachCredential, path: string): string[] {
  let policy: SandboxPolicy;
  try {
    policy = credential.sandboxPolicy();
  } catch {
    return []; // a credential without a sandbox (the host tiers): judged by the paths moved alone
  }
  return namedPathsUnder(policy, path, (p) => !credential.allows('write', p) || !credential.allows('read', p), process.platform);
}

/** The names in the main directory (at most LANDING_FOLDER_LINKS_MAX), none when it cannot be listed. */
function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir).slice(0, LANDING_FOLDER_LINKS_MAX);
  } catch {
    return [];
  }
}

import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { landingNames, pathIsUnder, type ReachCredential, type SandboxPolicy } from '@aalis/api-reach';
import { linkChainOf } from '@aalis/core';

/** The most entries of one landing folder looked at for links: hooks folders hold a few dozen. */
const FOLDER_LINKS_MAX = 512;

function isLink(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
}

/**
 * The landings that are symlinks whose way `path` lies on: a name they are resolved through
 * (replaced, it redirects them) or where they lead (written, it is their content). Looked for where
 * a landing is by its name in the credential's main directory (`CLAUDE.md`, `.git/hooks/*`, …) and
 * at the paths the policy's landings name (`~/.bashrc`). A write to `docs/agent.md` when
 * `CLAUDE.md -> docs/agent.md` is then asked for as the landing it is (the same seam the sandbox's
 * commit closes in sandbox-linux's `landing-links.ts`, found by an attack there).
 */
export function landingLinksThrough(credential: ReachCredential, path: string): string[] {
  let policy: SandboxPolicy | undefined;
  try {
    policy = credential.sandboxPolicy();
  } catch {
    policy = undefined; // a credential without a sandbox (the host tiers): the landing names alone
  }
  const candidates = new Set<string>();
  if (credential.home !== undefined) for (const name of landingNames()) candidates.add(join(credential.home, name));
  for (const rule of policy === undefined ? [] : [...policy.writeDeny, ...policy.controlDeny]) if ('path' in rule) candidates.add(rule.path);
  const links = new Set<string>();
  for (const candidate of candidates) {
    const st = lstatSync(candidate, { throwIfNoEntry: false });
    if (st === undefined || credential.allows('write', candidate)) continue;
    if (st.isSymbolicLink()) links.add(candidate);
    else if (st.isDirectory()) {
      let names: string[] = [];
      try {
        names = readdirSync(candidate).slice(0, FOLDER_LINKS_MAX);
      } catch {
        // unreadable: nothing to follow there
      }
      for (const name of names) if (isLink(join(candidate, name))) links.add(join(candidate, name));
    }
  }
  const found: string[] = [];
  for (const link of links) {
    if (credential.allows('write', link)) continue;
    let through: readonly string[];
    let target: string | undefined;
    try {
      ({ through, target } = linkChainOf(link));
    } catch {
      continue; // changed while read
    }
    if (through.includes(path) || (target !== undefined && pathIsUnder(path, target, process.platform))) found.push(link);
  }
  return found;
}

import { lstatSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { landingNames, namedPathsUnder, pathIsUnder, type ReachCredential, type SandboxPolicy } from '@aalis/api-reach';
import { ENVRC_MAX_BYTES, envrcReferences, expandHome, GIT_DIR_MARK_NAMES, gitConfigEntries, gitConfigProgramPaths, LANDING_FOLDER_LINKS_MAX, landingLinkChains, readRegularSync, takenForGitDir } from '@aalis/core';
import { hooksPathDirs } from '@aalis/plugin-reach';

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

/**
 * The hooks folder, config or program of a repository nested in the main directory that `path`
 * is (or lies in), when it is one: the policy names only the main repository's (its core.hooksPath,
 * its git directories), so a nested repository's `.githooks` or a bare repository's `hooks/`
 * (a local remote) was written unasked, and the host's next commit or push there ran it (found by
 * an attack, h108; the sandbox's commit reads them the same way, sandbox-linux landing-links.ts).
 */
export function nestedRepoLandingOf(home: string | undefined, path: string): string | undefined {
  if (home === undefined || !pathIsUnder(path, home, process.platform)) return undefined;
  const userHome = homedir();
  // the main directory's own repository is the policy's (asked for as its landings): nested ones only
  for (let dir = dirname(path); dir !== home && dirname(dir) !== dir; dir = dirname(dir)) {
    for (const landing of repoLandingsAt(dir, userHome)) if (landing === path || pathIsUnder(path, landing, process.platform)) return landing;
  }
  return undefined;
}

/** What a repository at `dir` (a `.git` there, or `dir` a bare one: `HEAD` and `objects`) runs or reads: none when it is none. */
function repoLandingsAt(dir: string, userHome: string): string[] {
  const kind = (p: string) => lstatSync(p, { throwIfNoEntry: false });
  if (kind(join(dir, '.git')) !== undefined) return hooksPathDirs(dir, { userHome, ...(process.env.XDG_CONFIG_HOME ? { xdgConfigHome: process.env.XDG_CONFIG_HOME } : {}) });
  if (!(kind(join(dir, 'HEAD'))?.isFile() && kind(join(dir, 'objects'))?.isDirectory())) return [];
  const out = ['hooks', 'config', 'config.worktree', 'commondir', 'modules', 'worktrees'].map((n) => join(dir, n));
  const included = new Set<string>();
  const entries = gitConfigEntries(join(dir, 'config'), userHome, 0, included);
  out.push(...gitConfigProgramPaths(entries, userHome, dir), ...included);
  for (const e of entries) {
    if (e.value === undefined || e.value === '' || e.section !== 'core' || e.subsection !== undefined || e.key !== 'hookspath') continue;
    const expanded = expandHome(e.value, userHome);
    out.push(isAbsolute(expanded) ? resolve(expanded) : resolve(dir, expanded));
  }
  return out;
}


/**
 * The folder a write to `path` would make git take for a repository of its own: the write
 * creates `HEAD`, `objects`, `refs` or `commondir` (the target, or a folder made on its way) and
 * the folder then holds a HEAD with objects and refs, or with a commondir. Git takes such a
 * folder for a repository before it looks for a `.git` above, reads its config and runs its hooks (the sandbox's commit refuses the same, sandbox-linux
 * `upper-commit.ts`: found by an attack, where a command's `docs/config` with `core.pager` ran at
 * the person's next `git log` in docs/). Undefined when it makes none.
 */
export function bareDisguiseOf(path: string): string | undefined {
  const exists = (p: string) => lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  // the target, and each folder above it that does not exist yet (made by the write)
  for (let at = path; dirname(at) !== at; at = dirname(at)) {
    if (at !== path && exists(at)) break;
    const name = basename(at);
    if (!(GIT_DIR_MARK_NAMES as readonly string[]).includes(name) || exists(at)) continue;
    const dir = dirname(at);
    // a commondir counts (found by an attack, h109: docs/HEAD with docs/commondir naming docs/store)
    if (takenForGitDir((m) => m === name || exists(join(dir, m)))) return dir;
  }
  return undefined;
}

/**
 * What an `.envrc` above `path` makes direnv run that `path` is, lies in, or holds (a move onto
 * a folder above one): the `.env` a `dotenv` exports, a `source_env` file, a `PATH_add` folder, a
 * local flake's `.nix` files (core's `envrcReferences`); direnv runs them at the next `cd` there, unasked (the sandbox's commit
 * refuses the same, sandbox-linux `envrcRules`). An `.envrc` that cannot be read or names what
 * cannot be told claims its folder whole. Undefined when none does.
 */
export function envrcLandingOf(path: string): { readonly envrc: string; readonly why: string } | undefined {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const envrc = join(dir, '.envrc');
    if (envrc !== path) {
      const read = readRegularSync(envrc, { maxBytes: ENVRC_MAX_BYTES, follow: true });
      if (read.kind === 'read') {
        const refs = envrcReferences(envrc, read.bytes.toString('utf8'), homedir(), process.env);
        // at or under what it loads, or over it (a move_path onto a folder above a PATH_add folder, h110)
        const hit = refs.paths.find((p) => p === path || pathIsUnder(path, p, process.platform) || pathIsUnder(p, path, process.platform));
        if (hit !== undefined) return { envrc, why: `it loads ${hit}` };
        if (refs.patterns.some((p) => new RegExp(p, 'su').test(path))) return { envrc, why: 'it loads a local flake, whose .nix files it may import' };
        if (refs.unresolved.length > 0) return { envrc, why: `it loads what cannot be told here (${refs.unresolved.join(', ')})` };
      } else if (read.kind !== 'missing') return { envrc, why: `it cannot be read (${read.why})` };
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Why `path` is a landing only the host tells (a nested repository's hooks, config or programs;
 * what an `.envrc` above it loads; the folder a write would make a repository of its own), as the
 * sentence a refusal says, or undefined when it is none. The host tools refuse such a write in the
 * sandboxed tiers, and `aalis explain` says so, from this one place.
 */
export function hostToldLandingOf(home: string | undefined, path: string): string | undefined {
  const nested = nestedRepoLandingOf(home, path);
  if (nested !== undefined) return `${path} is a landing: ${nested} is what git runs or reads as configuration in a repository nested in the main directory, and the sandboxed tiers never write it. Write it yourself, or in the full tier.`;
  const direnv = envrcLandingOf(path);
  if (direnv !== undefined) return `${path} is a landing: ${direnv.envrc} is run by direnv at the next cd there and ${direnv.why}, so what is written here runs unasked; the sandboxed tiers never write it. Write it yourself, or in the full tier.`;
  const disguise = bareDisguiseOf(path);
  if (disguise !== undefined) return `${path} is a landing: with HEAD beside objects and refs (or a commondir) git would take ${disguise} for a repository of its own, whose config it reads and whose hooks it runs, and the sandboxed tiers never make one. Make it yourself (git init --bare), or in the full tier.`;
  return undefined;
}

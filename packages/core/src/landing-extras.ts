import { closeSync, constants, lstatSync, openSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { ENVRC_MAX_BYTES, envrcReferences } from './envrc-references.js';
import { expandHome, gitConfigEntries, gitConfigProgramPaths, gitConfigValues } from './git-config.js';
import { canonicalHostPath, decodeHostPath, decodeHostText, encodePath, hasRawBytes, hostPathArg } from './host-names.js';
import { landingLinkChains } from './landing-link-chains.js';
import { type LinkChain, resolutionOf } from './link-chain.js';
import { escapePattern } from './pattern-escape.js';
import { readRegularSync } from './read-regular-sync.js';

/*
 * The landings a policy's lists cannot name, read from the host: what decides that a file some
 * tool runs is elsewhere than its usual name. One mechanism for every backend that judges a
 * command's writes after it ran (the Linux sandbox's commit, the docker sandbox's sweep).
 */

/**
 * A rule these builders add: structurally api-reach's `PathRule` (a path with all under it, or a
 * whole-path pattern). `strict`: one no write exception lifts (a name a person types, inside a
 * `node_modules/.bin` on their PATH); a backend adds it to the control-plane denials.
 */
export type LandingRule = ({ readonly path: string } | { readonly pattern: string }) & { readonly strict?: true };

/*
 * A landing that is a symlink (`.git/hooks/pre-commit -> ../../scripts/pre-commit.sh`, `~/.bashrc
 * -> dotfiles/current/bashrc`) is judged by its own name, and the file it leads to is mounted
 * read-only; but the names it is resolved through are ordinary paths. A command that replaced one
 * of them (`rm scripts; mkdir scripts; echo … > scripts/pre-commit.sh`, or `current` made a
 * directory of its own) moved the landing onto a file it wrote, and the commit judged that file by
 * its own name (found by an attack: the next host `git commit` ran the command's hook). So every
 * name such a link is resolved through is, for the commit, as protected as the landing: each
 * directory and symlink on the way by its exact name (replacing it redirects the link), and where
 * it ends with everything under it.
 */

/**
 * The extra landings for the landing symlinks among `candidates` (paths a scan matched or the
 * policy names, as the host has them now): every name each is resolved through that lies in a
 * writable root (`inRoot`: strictly below one), exactly, and its target with everything under it. Candidates that are not
 * symlinks, or not protected by the policy, add nothing.
 */
export function landingLinkRules(inRoot: (path: string) => boolean, candidates: Iterable<string>, protectedPath: (path: string) => boolean): LandingRule[] {
  const exact = new Set<string>();
  const trees = new Set<string>();
  for (const { chain } of landingLinkChains(candidates, protectedPath)) {
    for (const p of chain.through) if (inRoot(p)) exact.add(p);
    if (chain.target !== undefined && inRoot(chain.target)) trees.add(chain.target);
  }
  return [...[...exact].map((p) => ({ pattern: `^${escapePattern(p)}$` })), ...[...trees].map((path) => ({ path }))];
}

/** The git directory a `.git` file points to (`gitdir: …`), or undefined when it says none. */
function gitdirOf(dotGit: string): string | undefined {
  const read = readRegularSync(hostPathArg(dotGit), { maxBytes: 4096, follow: false });
  if (read.kind !== 'read') return undefined;
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(decodeHostText(read.bytes));
  return m === null ? undefined : resolvedFrom(dirname(dotGit), m[1]!).target;
}

/** {@link resolutionOf} from a directory given by any path (its real path taken first). */
function resolvedFrom(dir: string, path: string): LinkChain {
  let from = dir;
  try {
    from = decodeHostPath(realpathSync.native(hostPathArg(dir), { encoding: 'buffer' }));
  } catch {
    // not there: from its name
  }
  // named as the walks name them: a name from a config's text may not be UTF-8 (h115)
  const way = resolutionOf(from, path);
  return { through: way.through.map(canonicalHostPath), target: way.target === undefined ? undefined : canonicalHostPath(way.target) };
}

/**
 * The landings of the repositories whose `.git` the scan met (`candidates` named `.git`), beyond
 * what the landing patterns name by `.git/…`: a `.git` file's git directory elsewhere (the bare
 * layout, `gitdir: ./.bare`), its common directory, and the folders its config names in
 * `core.hooksPath` (found by an attack: a nested repository's `.bare/hooks` and `.githooks` took a
 * command's hooks). A config that cannot be read protects the whole repository: what it would say
 * cannot be judged.
 */
export function nestedRepoRules(candidates: Iterable<string>): LandingRule[] {
  const rules: LandingRule[] = [];
  const exact = (p: string) => rules.push({ pattern: `^${escapePattern(canonicalHostPath(p))}$` });
  const home = homedir();
  for (const dotGit of new Set(candidates)) {
    // a `HEAD` outside any `.git` (the scan finds it by the bare-repository pattern): its folder is a
    // bare repository git runs hooks and reads config in (found by an attack, h108: a workspace's
    // `remote.git` took a command's pre-receive, run by the host's next `git push` to it)
    if (basename(dotGit) === 'HEAD' && !dotGit.includes('/.git/')) {
      const dir = dirname(dotGit);
      if (hasRawBytes(dir)) rules.push({ path: dir });
      else {
        try {
          repoRules(dir, true, false, dir, home, rules, exact);
        } catch {
          rules.push({ path: dir }); // what it says cannot be read: protected whole
        }
      }
      continue;
    }
    if (basename(dotGit) !== '.git') continue;
    if (hasRawBytes(dotGit)) {
      rawRepoRules(dotGit, home, rules);
      continue;
    }
    const top = dirname(dotGit);
    try {
      // in the try: a repository past PATH_MAX (ENAMETOOLONG) failed every commit in the workspace (h115 R9b)
      const st = lstatSync(dotGit, { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isSymbolicLink()) {
        // the link's way and target are judged by the landing links; what the git directory it
        // leads to says is read here (found by an attack: a nested repository whose .git was a
        // link had the folder its core.hooksPath names unprotected, and took a command's hook)
        const real = realpathSync.native(dotGit);
        const to = lstatSync(real);
        repoRules(real, to.isDirectory(), to.isFile(), top, home, rules, exact);
      } else repoRules(dotGit, st.isDirectory(), st.isFile(), top, home, rules, exact);
    } catch {
      rules.push({ path: top }); // what it says cannot be read (a config that is no file, a way that changed): the repository is protected whole
    }
  }
  return rules;
}

/**
 * {@link nestedRepoRules} for a repository whose path holds a name that is not UTF-8 (`\xff/r/.git`):
 * the readers above take text paths, which cannot name it, so its config was never read and its
 * core.hooksPath took a command's hook (found by an attack). Protected whole, and what its `.git`
 * says is read through a descriptor: the folders core.hooksPath names (as git resolves them from
 * the top, by name), or the git directory a `.git` file points to, whole.
 */
function rawRepoRules(dotGit: string, home: string, rules: LandingRule[]): void {
  const top = dirname(dotGit);
  rules.push({ path: top });
  let fd: number | undefined;
  try {
    const st = lstatSync(encodePath(dotGit));
    const fromTop = (value: string) => {
      const expanded = expandHome(value, home);
      return isAbsolute(expanded) ? resolve(expanded) : resolve(top, expanded);
    };
    if (st.isFile()) {
      fd = openSync(encodePath(top), constants.O_RDONLY | constants.O_DIRECTORY);
      const read = readRegularSync(`/proc/self/fd/${fd}/.git`, { maxBytes: 4096, follow: false });
      const m = read.kind === 'read' ? /^gitdir:\s*(.+?)\s*$/m.exec(read.bytes.toString('utf8')) : null;
      if (m !== null) rules.push({ path: fromTop(m[1]!) });
      return;
    }
    if (!st.isDirectory()) return;
    fd = openSync(encodePath(dotGit), constants.O_RDONLY | constants.O_DIRECTORY);
    for (const file of [`/proc/self/fd/${fd}/config`, `/proc/self/fd/${fd}/config.worktree`]) {
      for (const value of gitConfigValues(file, 'core', 'hookspath', home)) if (value !== '') rules.push({ path: fromTop(value) });
    }
  } catch {
    // what it says cannot be read: the repository stays protected whole
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** {@link nestedRepoRules} for one repository (its `.git` a directory or a file); throws when what it says cannot be read. */
function repoRules(dotGit: string, isDir: boolean, isFile: boolean, top: string, home: string, rules: LandingRule[], exact: (p: string) => void): void {
  const gitDirs = new Set<string>();
  const gitDir = isDir ? dotGit : isFile ? gitdirOf(dotGit) : undefined;
  if (gitDir === undefined) return;
  gitDirs.add(gitDir);
  const common = readRegularSync(hostPathArg(join(gitDir, 'commondir')), { maxBytes: 4096, follow: false });
  const commonDir = common.kind === 'read' ? resolvedFrom(gitDir, decodeHostText(common.bytes).trim()).target : undefined;
  if (commonDir !== undefined) gitDirs.add(commonDir);
  const configs: string[] = [];
  for (const g of gitDirs) {
    // a linked worktree's own config and the way to its common directory, as api-reach's
    // gitDirLandings has them for the main one; its index, HEAD and logs are what a commit in it
    // writes (the whole `worktrees` folder refused every commit in a linked worktree, found by h112)
    rules.push({ path: join(g, 'hooks') }, { path: join(g, 'modules') }, { pattern: `^${escapePattern(join(g, 'worktrees'))}(?:/[^/]+(?:/(?:config\\.worktree|commondir))?)?$` });
    for (const name of ['config', 'config.worktree', 'commondir']) exact(join(g, name));
    configs.push(join(g, 'config'), join(g, 'config.worktree'));
  }
  const included = new Set<string>();
  for (const file of configs) {
    const entries = gitConfigEntries(file, home, 0, included);
    // the programs it runs by path (core.fsmonitor, a filter, an alias `!tools/x.sh`): as plugin-reach does for the cwd's repository
    for (const program of gitConfigProgramPaths(entries, home, top)) rules.push({ path: canonicalHostPath(program) });
    for (const value of entries.flatMap((e) => (e.value !== undefined && e.section === 'core' && e.subsection === undefined && e.key === 'hookspath' ? [e.value] : []))) {
      if (value === '') continue;
      const expanded = expandHome(value, home);
      // as git's lookup goes, one name at a time (`lnk/../hk` is where `lnk` leads, then up; found by an attack)
      const way = resolvedFrom(top, expanded);
      rules.push({ path: canonicalHostPath(isAbsolute(expanded) ? resolve(expanded) : resolve(top, expanded)) });
      if (way.target !== undefined) rules.push({ path: way.target });
      for (const p of way.through) exact(p);
    }
  }
  for (const file of included) rules.push({ path: canonicalHostPath(file) });
}

/**
 * The landings the `.envrc` files among `candidates` name (core's `envrcReferences`): what direnv
 * runs with them at the next `cd`, the `.env` a `dotenv` exports, a `source_env`'s file, a
 * `PATH_add`'s folder, a local flake's files. An `.envrc` that cannot be read, or names what
 * cannot be told (a variable), protects its folder whole: what it would load cannot be judged.
 */
export function envrcRules(candidates: Iterable<string>, said?: (folder: string, why: string) => void): LandingRule[] {
  const rules: LandingRule[] = [];
  for (const envrc of new Set(candidates)) {
    if (basename(envrc) !== '.envrc') continue;
    const raw = hasRawBytes(envrc);
    const read = readRegularSync(raw ? encodePath(envrc) : envrc, { maxBytes: ENVRC_MAX_BYTES, follow: true });
    if (read.kind === 'missing') continue;
    if (raw) {
      // a folder whose name is not UTF-8 (found by review: such an .envrc was skipped, and what it
      // loads landed): protected whole, as a nested repository there is, and what it names besides
      rules.push({ path: dirname(envrc) });
      said?.(dirname(envrc), 'its .envrc lies under a name that is not UTF-8');
    }
    if (read.kind !== 'read') {
      if (!raw) {
        rules.push({ path: dirname(envrc) });
        said?.(dirname(envrc), `its .envrc cannot be read (${read.why})`);
      }
      continue;
    }
    // its bytes kept (a `source_env lib\xff.sh` read as U+FFFD named no file, and the command's landed: h115)
    const refs = envrcReferences(envrc, decodeHostText(read.bytes), homedir(), process.env);
    if (refs.unresolved.length > 0 && !raw) {
      rules.push({ path: dirname(envrc) });
      said?.(dirname(envrc), `its .envrc loads what cannot be told here (${refs.unresolved.join(', ')})`);
    }
    for (const path of refs.paths) rules.push({ path: canonicalHostPath(path) });
    for (const pattern of refs.patterns) rules.push({ pattern });
    for (const pattern of refs.strictPatterns ?? []) rules.push({ pattern, strict: true });
    for (const path of sourcedReferences(envrc, refs.paths)) rules.push({ path: canonicalHostPath(path) });
    // a pattern holds its folder as text, which for a name that is not UTF-8 may not be the walks' name: the folder whole
    if (!raw && refs.patterns.some(hasRawBytes)) {
      rules.push({ path: dirname(envrc) });
      said?.(dirname(envrc), 'its .envrc names a place whose name is not UTF-8 in a way this reads only as a pattern');
    }
  }
  return rules;
}

/** Files an `.envrc` names that are data, not shell: not read for what they load in turn. */
const NOT_SHELL = /(?:^\.env(?:\..*)?|\.(?:nix|lock|json|toml|ya?ml|py|rb|js|cjs|mjs|ts))$/;
/** How deep, and how many, files sourced from sourced files are read. */
const SOURCED_DEPTH = 3;
const SOURCED_FILES = 16;

/**
 * What the files an `.envrc` loads load in turn (found by an attack, h115 E8: the person's
 * `lib.sh`, sourced by the `.envrc`, sources `more.sh`, which was missing; the command wrote it,
 * and direnv ran it at the next `cd`). Each such file that stands on the host as a regular file
 * and reads as shell is read as an `.envrc` is, its relative names taken both from the `.envrc`'s
 * folder (bash's `source` keeps the directory) and from its own (direnv's `source_env` enters it);
 * a few levels deep. What such a file names that cannot be told is not followed (its folder is the
 * `.envrc`'s own concern: protected whole for the `.envrc` itself, not for what it sources).
 */
function sourcedReferences(envrc: string, first: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>([envrc]);
  let level = first;
  for (let depth = 0; depth < SOURCED_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const file of level) {
      if (seen.has(file) || seen.size > SOURCED_FILES || NOT_SHELL.test(basename(file))) continue;
      seen.add(file);
      const read = readRegularSync(hostPathArg(file), { maxBytes: ENVRC_MAX_BYTES, follow: true });
      if (read.kind !== 'read') continue;
      const text = decodeHostText(read.bytes);
      for (const base of new Set([dirname(envrc), dirname(file)])) {
        for (const path of envrcReferences(join(base, '.envrc'), text, homedir(), process.env).paths) {
          out.push(path);
          next.push(path);
        }
      }
    }
    level = next;
  }
  return out;
}

/** What {@link landingExtraRules} reads the host for. */
export interface LandingExtrasInput {
  /** The writable roots, real paths. */
  readonly write: readonly string[];
  /** Whether a path lies strictly below a writable root (the caller's is-under). */
  readonly inRoot: (path: string) => boolean;
  /** Paths a scan of the writable roots matched (`.git`, `HEAD`, `.envrc`, landing symlinks) and the landings the policy names. */
  readonly candidates: Iterable<string>;
  /** Whether the policy keeps a path from the command (a landing or hidden): which symlinks among the candidates are landings. */
  readonly protectedPath: (path: string) => boolean;
  /** Told of each folder protected whole, and why. */
  readonly said?: (folder: string, why: string) => void;
}

/**
 * Every extra landing: {@link landingLinkRules}, {@link nestedRepoRules}, and {@link envrcRules}
 * for the candidates' `.envrc` files and those above each writable root (direnv loads the nearest
 * one above where the person is; a scan walks only below).
 */
export function landingExtraRules(input: LandingExtrasInput): LandingRule[] {
  const all = [...input.candidates];
  const above = input.write.flatMap((root) => {
    const out: string[] = [];
    for (let d = dirname(root); d !== dirname(d); d = dirname(d)) out.push(join(d, '.envrc'));
    return out;
  });
  return [...landingLinkRules(input.inRoot, all, input.protectedPath), ...nestedRepoRules(all), ...envrcRules([...all, ...above], input.said)];
}

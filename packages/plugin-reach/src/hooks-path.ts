import { isAbsolute, join, resolve } from 'node:path';
import { escapePattern, type PathMatcher } from '@aalis/api-reach';
import { expandHome, type GitConfigEntry, GitConfigUnreadableError, gitConfigEntries, gitConfigProgramPaths, gitConfigProgramWords, resolutionOf } from '@aalis/core';
import { PathRefusedError } from './path-refused.js';
import { repoOf } from './git-dirs.js';
import { realPathOfSync } from './real-path.js';

/** Where the daemon looks for git's system and global config (the defaults; `GIT_CONFIG_*` overrides are not followed). */
export interface GitConfigPlaces {
  readonly userHome: string;
  /** `$XDG_CONFIG_HOME`, when set. */
  readonly xdgConfigHome?: string;
  /** The system config file; default `/etc/gitconfig`. */
  readonly systemConfig?: string;
}

/**
 * The directories `core.hooksPath` (and `init.templateDir`: the hooks every new repository gets)
 * names for the repository `start` is in: read from the system,
 * global (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) and repository config (`config` of the
 * common dir, `config.worktree` of the worktree's git dir), following includes. Every value found
 * counts, not only the one git would use last: each is a place git may run hooks from. A relative
 * value is taken from the top of the working tree (where git runs hooks), `~/` from the home.
 * Outside a repository only the system and global values count, relative ones from `start`.
 * The path as named and its real path (they differ behind a symlink), for landings (`{ path }`:
 * the directory and everything in it). With them, every config file those configs include
 * (`include.path`, `includeIf.*.path`): a landing as `.git/config` is.
 */
export function hooksPathDirs(start: string, places: GitConfigPlaces): string[] {
  return hooksPathsOf(start, places).dirs;
}

/**
 * The landings `core.hooksPath` makes for the repository `start` is in ({@link hooksPathDirs},
 * each a folder with all under it) and, for each relative value of the system and global config,
 * a pattern: git takes such a value from the top of whatever repository it runs in, so it names a
 * hooks folder in every folder that is or becomes one (a nested repository, one a command makes:
 * `.githooks` set globally, a command's `git init x` with `x/.githooks/pre-commit` was a hook the
 * next commit there ran; found by a review).
 */
export function hooksPathLandings(start: string, places: GitConfigPlaces): PathMatcher[] {
  const { dirs, anywhere } = hooksPathsOf(start, places);
  // a relative $XDG_CONFIG_HOME, which git (unlike the spec) reads from wherever it runs: its git
  // folder is a landing in every folder (found by an attack, h109; an absolute one is the table's,
  // api-reach xdg-dirs.ts)
  if (places.xdgConfigHome !== undefined && places.xdgConfigHome !== '' && !isAbsolute(places.xdgConfigHome)) anywhere.push(anywherePattern(join(places.xdgConfigHome, 'git')));
  return [...dirs.map((path) => ({ path })), ...anywhere.map((pattern) => ({ pattern }))];
}

/** The hooks that git runs by name (githooks(5)): where `core.hooksPath` is a top itself (`.`), these names are hooks in every folder. */
const HOOK_NAMES = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit',
  'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update', 'proc-receive', 'post-receive', 'post-update',
  'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman',
  'p4-changelist', 'p4-prepare-changelist', 'p4-post-changelist', 'p4-pre-submit', 'post-index-change',
] as const;

/**
 * The pattern of a relative `core.hooksPath` taken from every top: its names after any leading
 * `..` (which leads above some top, so anywhere: more is protected, never less), as a folder with
 * all under it; a value that names the top itself, git's hook names in every folder.
 */
function anywherePattern(value: string): string {
  const names = value.split('/').filter((n) => n !== '' && n !== '.');
  while (names[0] === '..') names.shift();
  if (names.includes('..')) return '^/.*$'; // `a/../b` from a top that is a link: where it leads cannot be told from here
  if (names.length === 0) return `^/(?:.*/)?(?:${HOOK_NAMES.map(escapePattern).join('|')})$`;
  return `^/(?:.*/)?${escapePattern(names.join('/'))}(?:/.*)?$`;
}

function hooksPathsOf(start: string, places: GitConfigPlaces): { dirs: string[]; anywhere: string[] } {
  const home = places.userHome;
  const repo = repoOf(start);
  const files = [
    places.systemConfig ?? '/etc/gitconfig',
    join(places.xdgConfigHome ?? join(home, '.config'), 'git', 'config'),
    join(home, '.gitconfig'),
    ...(repo === undefined ? [] : [join(repo.commonDir ?? repo.gitDir, 'config'), join(repo.gitDir, 'config.worktree')]),
  ];
  const top = repo?.top ?? realPathOfSync(start);
  const dirs = new Set<string>();
  const anywhere = new Set<string>();
  const included = new Set<string>();
  for (const [i, file] of files.entries()) {
    // init.templateDir: what `git init` and `git clone` copy into every new repository's git
    // directory, hooks included (a `post-checkout` there runs during the clone): as much a landing
    // as a hooks folder (found by an attack: `init.templateDir = ~/dotfiles/git-template`, and a
    // command in ~/dotfiles wrote hooks/post-checkout, unasked; the next `git clone` ran it)
    const entries = entriesOf(file, home, included);
    // a program the config runs, named by a path (`core.fsmonitor = ~/bin/watch.sh`, a credential
    // helper, a filter, an alias `!scripts/x.sh`): a command that rewrote it ran its code at the
    // person's next git command (found by an attack, h104)
    for (const program of gitConfigProgramPaths(entries, home, top)) dirs.add(program);
    // a relative one of the system's or the global config is taken from the top of whatever
    // repository git runs in, as a relative hooksPath is: that name in every folder (found by an
    // attack, h108: a repository a command made, with its own tools/strip.sh for a global filter)
    if (i < 3) for (const word of gitConfigProgramWords(entries)) if (!isAbsolute(expandHome(word, home))) anywhere.add(anywherePattern(word));
    const values = entries.flatMap((e) => (e.value !== undefined && e.subsection === undefined && ((e.section === 'core' && e.key === 'hookspath') || (e.section === 'init' && e.key === 'templatedir')) ? [e.value] : []));
    for (const value of values) {
      if (value === '') continue;
      const expanded = expandHome(value, home);
      // the system's and the global config's (the first three files, and what they include) hold for every repository
      if (i < 3 && !isAbsolute(expanded)) anywhere.add(anywherePattern(expanded));
      const named = isAbsolute(expanded) ? resolve(expanded) : resolve(top, expanded);
      // the name git will look up, and where it leads now: replacing a symlink there with a
      // directory of one's own must be a landing write too
      dirs.add(named);
      dirs.add(realPathOfSync(named));
      // and as git's lookup goes, a name at a time: `lnk/../hk` is up from where `lnk` leads, not `hk` (found by an attack)
      const way = resolutionOf(isAbsolute(expanded) ? '/' : top, expanded);
      if (way.target !== undefined) dirs.add(way.target);
    }
  }
  // a file an include names is git's configuration as much as .git/config (core.fsmonitor, aliases,
  // filters run commands), wherever it is (found by an attack: `include.path = ../.gitconfig`, and
  // a command wrote core.fsmonitor there), missing or not; by name and by where it leads now
  for (const file of included) {
    dirs.add(file);
    dirs.add(realPathOfSync(file));
  }
  return { dirs: [...dirs], anywhere: [...anywhere] };
}

/** The entries of one config file and its includes; one that cannot be read refuses the call (a path refusal: nothing was run). */
function entriesOf(file: string, home: string, included: Set<string>): GitConfigEntry[] {
  try {
    return gitConfigEntries(file, home, 0, included);
  } catch (error) {
    if (error instanceof GitConfigUnreadableError) throw new PathRefusedError('git-config-unreadable', error.message, error.fix === undefined ? {} : { fix: error.fix });
    throw error;
  }
}

import { isAbsolute, join, resolve } from 'node:path';
import { expandHome, GitConfigUnreadableError, gitConfigValues, resolutionOf } from '@aalis/core';
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
 * The directories `core.hooksPath` names for the repository `start` is in: read from the system,
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
  const included = new Set<string>();
  for (const file of files) {
    for (const value of valuesOf(file, home, included)) {
      if (value === '') continue;
      const expanded = expandHome(value, home);
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
  return [...dirs];
}

/** `core.hooksPath` of one config file and its includes; one that cannot be read refuses the call (a path refusal: nothing was run). */
function valuesOf(file: string, home: string, included: Set<string>): string[] {
  try {
    return gitConfigValues(file, 'core', 'hookspath', home, 0, included);
  } catch (error) {
    if (error instanceof GitConfigUnreadableError) throw new PathRefusedError('git-config-unreadable', error.message, error.fix === undefined ? {} : { fix: error.fix });
    throw error;
  }
}

import { gitConfigNotInert } from './inert-git-config.js';
import type { RegularRead } from './read-regular-sync.js';

/*
 * `git init`, `git clone`, `cargo new` and `npm create` make a `.git` folder, a landing: a backend
 * that refused every entry of it left a project a command made without its repository (29 entries
 * refused for one `git init && git commit`), where the peers keep it. A new repository runs
 * nothing of its own but its hooks and its config, so one whose hooks folder holds only git's
 * samples (never run: git runs a hook by its exact name) and whose config sets only what git
 * writes when it makes a repository (`gitConfigNotInert`) is data. Anything else in that shape (a
 * hook, a config key that runs a program, `commondir`, a symlink, a FIFO, submodules' or
 * worktrees' git folders) leaves it the landing it was. One judge for every backend that lets a
 * new repository land (the Linux commit, the docker check after a run); each walks the folder its
 * own way, without following a link, and hands every entry here in the walk's order.
 */

/** What a new `.git` folder is: inert data, or why not. */
export type NewGitDirVerdict = { readonly inert: true } | { readonly inert: false; readonly why: string };

/** An entry of a new git folder as the judge needs it: its kind, and its link count for a file. */
export interface NewGitDirEntry {
  /** The path from the git folder, '/'-separated; '' for the folder itself. */
  readonly rel: string;
  readonly kind: 'file' | 'dir' | 'link' | 'other';
  /** A file's number of names (`nlink`); 1 when the backend commits every file as a new inode. */
  readonly links: number;
}

/** Names directly in a git folder that send git elsewhere or hold other repositories' git folders. */
const ELSEWHERE = new Set(['commondir', 'config.worktree', 'modules', 'worktrees', 'gitdir']);

/**
 * What git keeps directly in a git folder (and git-lfs, gitk and rerere beside it): anything else
 * there is no part of a new repository's own, and may be what some setting runs (a global
 * `core.hooksPath = .git/team-hooks` made a `team-hooks/pre-commit` of the command's run; found
 * by an attack, h120), so it leaves the folder a landing.
 */
const GIT_DIR_NAMES = new Set([
  'HEAD', 'config', 'description', 'hooks', 'info', 'objects', 'refs', 'logs', 'index', 'packed-refs', 'shallow',
  'COMMIT_EDITMSG', 'ORIG_HEAD', 'FETCH_HEAD', 'MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'MERGE_RR', 'AUTO_MERGE',
  'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'REBASE_HEAD', 'BISECT_LOG', 'BISECT_START', 'BISECT_EXPECTED_REV', 'BISECT_ANCESTORS_OK',
  'BISECT_NAMES', 'BISECT_TERMS', 'BISECT_FIRST_PARENT', 'BISECT_HEAD', 'NOTES_MERGE_PARTIAL', 'NOTES_MERGE_REF', 'NOTES_MERGE_WORKTREE',
  'gc.log', 'gc.pid', 'rr-cache', 'lfs', 'gitk.cache', 'branches', 'remotes', 'modules', 'worktrees', 'commondir', 'config.worktree',
  'gitdir', 'rebase-merge', 'rebase-apply', 'sequencer',
]);

/** A rebase's or a cherry-pick's state: `git rebase --continue` runs its todo's `exec` lines. */
const IN_PROGRESS = new Set(['rebase-merge', 'rebase-apply', 'sequencer']);

/**
 * The judge of one new git folder's walk: {@link NewGitDirJudge.problem} for each entry, which
 * also keeps what the walk has seen (a folder inside holding `HEAD` and `objects` is one git would
 * take for a repository when run there, the bare-repository disguise: its own config would then be
 * read, unjudged).
 */
export class NewGitDirJudge {
  private readonly marks = new Map<string, number>();

  /**
   * `bare`: the folder is a bare repository (`remote.git`), an ordinary folder to every other tool,
   * where other names are the folder's own files (each judged by the landing rules as such); in a
   * `.git` only the names git keeps there are data.
   */
  constructor(private readonly bare = false) {}

  /**
   * Why `entry` makes the folder more than data, or undefined when it is data. `readConfig` reads
   * the `config` file's bytes (without following a link), and is asked only for it.
   */
  problem(entry: NewGitDirEntry, readConfig: () => RegularRead): string | undefined {
    const why = entryProblem(entry, readConfig, this.bare);
    if (why !== undefined) return why;
    const { rel } = entry;
    const slash = rel.lastIndexOf('/');
    const base = rel.slice(slash + 1);
    // with a `commondir` a folder needs no objects of its own: HEAD and commondir are a git folder
    // (a worktree's), its objects, refs, hooks and config where commondir says (found by an attack,
    // h106: `.git/x` holding HEAD and `commondir -> vendor/c`, a bare repository's hooks of the
    // command's, with remote.origin.url = .git/x: the host's next `git push` ran vendor/c's pre-receive)
    const mark = base === 'HEAD' ? 1 : base === 'objects' ? 2 : base === 'commondir' ? 4 : 0;
    if (slash <= 0 || mark === 0) return undefined;
    const dir = rel.slice(0, slash);
    const seen = (this.marks.get(dir) ?? 0) | mark;
    this.marks.set(dir, seen);
    return seen & 1 && seen & 6 ? `${dir} holds a HEAD and ${seen & 2 ? 'objects' : 'a commondir'}: git run there (or pushing to it) would take it for a repository of its own` : undefined;
  }
}

function entryProblem({ rel, kind, links }: NewGitDirEntry, readConfig: () => RegularRead, bare: boolean): string | undefined {
  const shown = rel === '' ? 'the folder' : rel;
  if (kind === 'link') return `${shown} is a symlink`;
  if (kind === 'other') return `${shown} is neither a file nor a folder`;
  if ((rel === '' || rel === 'hooks') && kind !== 'dir') return `${shown} is no folder`;
  if (!bare && rel !== '' && !rel.includes('/') && !GIT_DIR_NAMES.has(rel) && !/^[\w.-]+\.lock$/.test(rel)) return `it has ${rel}, which is no name git keeps in a git folder (a setting may run what is in it)`;
  if (ELSEWHERE.has(rel)) return `it has ${rel}, which points git at other git folders`;
  // a rebase or cherry-pick in progress runs the `exec` lines of its todo at `--continue` (h106)
  if (IN_PROGRESS.has(rel)) return `it has ${rel}, a rebase or cherry-pick in progress whose todo can run commands`;
  // git's older ways to name a remote, read as `remote.*`: `git init` leaves `branches/` empty (found by an attack, h106)
  if (/^(?:remotes|branches)\/./.test(rel)) return `${rel} names a remote in git's older form, which this does not read`;
  if (rel.startsWith('hooks/') && !(kind === 'file' && rel.endsWith('.sample') && !rel.slice(6).includes('/'))) return `${rel} is a hook git would run (only git's *.sample files are data)`;
  if (rel === 'config') {
    if (kind !== 'file') return 'config is no file';
    // another name of the same file would change the config later, past every landing rule (a
    // backend that writes in place, as docker's bind mounts do)
    if (links !== 1) return 'its config has other hard links, through which it could be changed later';
    const read = readConfig();
    if (read.kind !== 'read') return `its config cannot be read (${read.kind === 'missing' ? 'gone' : read.why})`;
    const problem = gitConfigNotInert(read.bytes);
    if (problem !== undefined) return `its config: ${problem}`;
  }
  return undefined;
}

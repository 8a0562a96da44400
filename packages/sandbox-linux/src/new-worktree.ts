import { closeSync, lstatSync, readdirSync } from 'node:fs';
import { decodeName, readRegularSync } from '@aalis/core';
import { atFd } from './host-walk.js';

/*
 * `git worktree add wt` writes two things, both landings: a folder `.git/worktrees/<name>` (a
 * linked worktree's own git directory: its HEAD, index and logs, and a `commondir` naming the main
 * git directory, whose config and hooks it uses), and a file `wt/.git` saying `gitdir:` that
 * folder. Refused, the person was left with wt/ as untracked files and the branch's commits
 * unreachable from it, where the command had said it worked (found by an attack, h115 F1). A
 * worktree made this way runs nothing of its own: git takes the config and hooks from the common
 * directory, the main repository's, which stay landings. So a new one is committed when it is
 * exactly that shape: in the repository at the top of the writable root, where the host had no
 * such folder; its `commondir` `../..`; its `gitdir` the new `.git` file of a folder in the same
 * root that may hold new names, which points back at it; nothing in it but the files git keeps
 * per worktree (no `config.worktree`, hooks, objects, rebase state, symlink or FIFO).
 */

/** What may stand in a linked worktree's git directory: git's per-worktree state, read as data. */
const WORKTREE_FILES = new Set(['HEAD', 'ORIG_HEAD', 'FETCH_HEAD', 'MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'AUTO_MERGE', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'COMMIT_EDITMSG', 'index', 'commondir', 'gitdir', 'locked']);
/** Folders of per-worktree state, holding files only: reflogs and per-worktree refs. */
const WORKTREE_DIRS = new Set(['logs', 'refs']);

/** The new linked worktrees found admissible: their git directories and their `.git` files, by path. */
export interface NewWorktrees {
  /** `<root>/.git/worktrees/<name>` folders, each committed whole. */
  readonly gitDirs: readonly string[];
  /** `<root>/<folder>/.git` files pointing at one of them. */
  readonly dotGits: readonly string[];
  /** `<root>/.git/worktrees` when the host had none (the first worktree). */
  readonly container?: string;
  /** New worktree folders not of that shape: they stay landings, and the commit says so. */
  readonly refused?: readonly string[];
}

const NONE: NewWorktrees = { gitDirs: [], dotGits: [] };
const MAX_POINTER = 4096;

/**
 * The new linked worktrees of the repository at `root` (the overlay's root, whose upper layer is
 * open at `upperRoot` and host folder at `hostRoot`): each `.git/worktrees/<name>` of the upper
 * layer the host lacks, judged as above. `newNameAllowed(dir)` says whether the policy lets a new
 * name be made in the host folder `dir`. Read by descriptors, never following a link; the command
 * is gone, so nothing changes the layer meanwhile.
 */
export function newWorktrees(upperRoot: number, hostRoot: number, root: string, open: (fd: number, name: Buffer) => number | undefined, newNameAllowed: (dir: string) => boolean): NewWorktrees {
  const hostGit = lstatOr(atFd(hostRoot, Buffer.from('.git')));
  if (!hostGit?.isDirectory()) return NONE;
  const upperGit = openDirIn(upperRoot, '.git', open);
  if (upperGit === undefined) return NONE;
  try {
    const upperWt = openDirIn(upperGit, 'worktrees', open);
    if (upperWt === undefined) return NONE;
    try {
      const hostWt = lstatOr(atFd(hostRoot, Buffer.from('.git/worktrees')));
      if (hostWt !== undefined && !hostWt.isDirectory()) return NONE;
      const gitDirs: string[] = [];
      const dotGits: string[] = [];
      const refused: string[] = [];
      let others = false;
      for (const n of readdirSync(`/proc/self/fd/${upperWt}`, { encoding: 'buffer' })) {
        const name = decodeName(n);
        const gitDir = `${root}/.git/worktrees/${name}`;
        const dotGit = admissible(upperRoot, upperWt, n, gitDir, root, hostRoot, open, newNameAllowed);
        if (lstatOr(atFd(hostRoot, Buffer.from(`.git/worktrees/${name}`))) !== undefined) {
          others = true; // the host's own: its landings hold as before
          continue;
        }
        if (dotGit === undefined) {
          others = true;
          refused.push(gitDir);
          continue;
        }
        gitDirs.push(gitDir);
        dotGits.push(dotGit);
      }
      // a new `worktrees` folder holding anything else is not git's: none of it lands
      if (hostWt === undefined && others) return { gitDirs: [], dotGits: [], refused: [...refused, ...gitDirs] };
      return { gitDirs, dotGits, refused, ...(hostWt === undefined && gitDirs.length > 0 ? { container: `${root}/.git/worktrees` } : {}) };
    } finally {
      closeSync(upperWt);
    }
  } finally {
    closeSync(upperGit);
  }
}

/** The path of the new `.git` file pointing at the worktree folder `n` (open in `upperWt`), when the pair is the shape above; undefined otherwise. */
function admissible(upperRoot: number, upperWt: number, n: Buffer, gitDir: string, root: string, hostRoot: number, open: (fd: number, name: Buffer) => number | undefined, newNameAllowed: (dir: string) => boolean): string | undefined {
  const st = lstatOr(atFd(upperWt, n));
  if (!st?.isDirectory()) return undefined;
  const fd = open(upperWt, n);
  if (fd === undefined) return undefined;
  try {
    for (const e of readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' })) {
      const name = e.toString('latin1');
      const est = lstatOr(atFd(fd, e));
      if (est === undefined) return undefined;
      if (WORKTREE_FILES.has(name) ? !est.isFile() : !(WORKTREE_DIRS.has(name) && est.isDirectory() && filesOnly(fd, e, open))) return undefined;
    }
    if (read(fd, 'commondir')?.trim() !== '../..') return undefined;
    const pointer = read(fd, 'gitdir')?.replace(/\n$/, '');
    if (pointer === undefined || !pointer.startsWith(`${root}/`) || !pointer.endsWith('/.git')) return undefined;
    const rel = pointer.slice(root.length + 1);
    const parts = rel.split('/');
    if (parts.some((p) => p === '' || p === '.' || p === '..') || parts[0] === '.git') return undefined;
    const folder = pointer.slice(0, -'/.git'.length);
    if (!newNameAllowed(folder)) return undefined;
    // the `.git` file: new, in the upper layer, reached through folders (no link), naming this folder back
    let dir = upperRoot;
    const opened: number[] = [];
    try {
      for (const p of parts.slice(0, -1)) {
        const next = open(dir, Buffer.from(p));
        if (next === undefined) return undefined;
        opened.push(next);
        dir = next;
      }
      const file = lstatOr(atFd(dir, Buffer.from('.git')));
      if (!file?.isFile() || file.nlink !== 1) return undefined;
      if (read(dir, '.git') !== `gitdir: ${gitDir}\n`) return undefined;
    } finally {
      for (const o of opened) closeSync(o);
    }
    if (lstatOr(atFd(hostRoot, Buffer.from(rel))) !== undefined) return undefined;
    return pointer;
  } finally {
    closeSync(fd);
  }
}

/** Whether the folder `name` (in the directory open at `fd`) holds regular files and folders of them only. */
function filesOnly(fd: number, name: Buffer, open: (fd: number, name: Buffer) => number | undefined): boolean {
  const d = open(fd, name);
  if (d === undefined) return false;
  try {
    for (const e of readdirSync(`/proc/self/fd/${d}`, { encoding: 'buffer' })) {
      const st = lstatOr(atFd(d, e));
      if (st === undefined) return false;
      if (st.isDirectory() ? !filesOnly(d, e, open) : !st.isFile()) return false;
    }
    return true;
  } finally {
    closeSync(d);
  }
}

function read(fd: number, name: string): string | undefined {
  const r = readRegularSync(atFd(fd, Buffer.from(name)), { maxBytes: MAX_POINTER, follow: false });
  return r.kind === 'read' ? r.bytes.toString('utf8') : undefined;
}

function lstatOr(path: Buffer): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function openDirIn(fd: number, name: string, open: (fd: number, name: Buffer) => number | undefined): number | undefined {
  const st = lstatOr(atFd(fd, Buffer.from(name)));
  return st?.isDirectory() ? open(fd, Buffer.from(name)) : undefined;
}

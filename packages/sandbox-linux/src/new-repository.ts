import { lstatSync, type Stats } from 'node:fs';
import { decodeName, gitConfigNotInert, INERT_GIT_CONFIG_MAX_BYTES, readRegularSync } from '@aalis/core';
import { atFd } from './host-walk.js';
import { walkTree } from './dir-cursor.js';

/*
 * `git init`, `git clone`, `cargo new` and `npm create` make a `.git` folder, a landing: before,
 * the commit refused every entry of it, so a project a command made came out without its
 * repository (29 entries refused for one `git init && git commit`), where the peers keep it. A new
 * repository runs nothing of its own but its hooks and its config, so one whose hooks folder holds
 * only git's samples (never run: git runs a hook by its exact name) and whose config sets only
 * what git writes when it makes a repository (core's `gitConfigNotInert`) is data, and committed.
 * Anything else in that shape (a hook, a config key that runs a program, `commondir`, a symlink,
 * a FIFO, submodules' or worktrees' git folders) leaves it the landing it was: refused, with the
 * reason said. Only where the host had no `.git` at all: an existing repository's hooks and config
 * stay landings whatever is written there.
 */

/** What a new `.git` folder of the upper layer is: inert data, or why not. */
export type NewRepositoryVerdict = { readonly inert: true } | { readonly inert: false; readonly why: string };

/** Names directly in a git folder that send git elsewhere or hold other repositories' git folders. */
const ELSEWHERE = new Set(['commondir', 'config.worktree', 'modules', 'worktrees', 'gitdir']);

/** A rebase's or a cherry-pick's state: `git rebase --continue` runs its todo's `exec` lines. */
const IN_PROGRESS = new Set(['rebase-merge', 'rebase-apply', 'sequencer']);

/** Why one entry of a new git folder (`rel` from it, '' for the folder) makes it more than data; undefined when it is data. */
function problemOf(d: number, n: Buffer, rel: string, st: Stats): string | undefined {
  const shown = rel === '' ? 'the folder' : rel;
  if (st.isSymbolicLink()) return `${shown} is a symlink`;
  if (!st.isDirectory() && !st.isFile()) return `${shown} is neither a file nor a folder`;
  if ((rel === '' || rel === 'hooks') && !st.isDirectory()) return `${shown} is no folder`;
  if (ELSEWHERE.has(rel)) return `it has ${rel}, which points git at other git folders`;
  // a rebase or cherry-pick in progress runs the `exec` lines of its todo at `--continue` (h106)
  if (IN_PROGRESS.has(rel)) return `it has ${rel}, a rebase or cherry-pick in progress whose todo can run commands`;
  // git's older ways to name a remote, read as `remote.*`: `git init` leaves `branches/` empty (found by an attack, h106)
  if (/^(?:remotes|branches)\/./.test(rel)) return `${rel} names a remote in git's older form, which this does not read`;
  if (rel.startsWith('hooks/') && !(st.isFile() && rel.endsWith('.sample') && !rel.slice(6).includes('/'))) return `${rel} is a hook git would run (only git's *.sample files are data)`;
  if (rel === 'config') {
    if (!st.isFile()) return 'config is no file';
    const read = readRegularSync(atFd(d, n), { maxBytes: INERT_GIT_CONFIG_MAX_BYTES, follow: false });
    if (read.kind !== 'read') return `its config cannot be read (${read.kind === 'missing' ? 'gone' : read.why})`;
    const problem = gitConfigNotInert(read.bytes);
    if (problem !== undefined) return `its config: ${problem}`;
  }
  return undefined;
}

/**
 * Judges the upper layer's new `.git` folder `name` (in the directory open at `upperFd`), walked
 * by descriptors without following a link. The command is gone, so nothing changes it meanwhile.
 */
export function newRepositoryVerdict(upperFd: number, name: Buffer, open: (dirFd: number, name: Buffer) => number | undefined): NewRepositoryVerdict {
  let why: string | undefined;
  // a folder inside holding `HEAD` and `objects` is a repository git would take for one when run
  // there (the bare-repository disguise): its own config would then be read, unjudged
  const marks = new Map<string, number>();
  const walked = walkTree(
    upperFd,
    name,
    '',
    (dir, n) => (dir === '' ? decodeName(n) : `${dir}/${decodeName(n)}`),
    (d, n, rel) => {
      const st = lstatSync(atFd(d, n));
      why = problemOf(d, n, rel, st);
      const slash = rel.lastIndexOf('/');
      const base = rel.slice(slash + 1);
      // with a `commondir` a folder needs no objects of its own: HEAD and commondir are a git folder
      // (a worktree's), its objects, refs, hooks and config where commondir says (found by an attack,
      // h106: `.git/x` holding HEAD and `commondir -> vendor/c`, a bare repository's hooks of the
      // command's, with remote.origin.url = .git/x: the host's next `git push` ran vendor/c's pre-receive)
      const mark = base === 'HEAD' ? 1 : base === 'objects' ? 2 : base === 'commondir' ? 4 : 0;
      if (why === undefined && slash > 0 && mark !== 0) {
        const dir = rel.slice(0, slash);
        const seen = (marks.get(dir) ?? 0) | mark;
        marks.set(dir, seen);
        if (seen & 1 && seen & 6) why = `${dir} holds a HEAD and ${seen & 2 ? 'objects' : 'a commondir'}: git run there (or pushing to it) would take it for a repository of its own`;
      }
      if (why !== undefined) return 'stop';
      return st.isDirectory() ? 'descend' : 'leaf';
    },
    open,
  );
  return walked && why === undefined ? { inert: true } : { inert: false, why: why ?? 'it could not be read whole' };
}

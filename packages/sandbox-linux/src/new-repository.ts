import { lstatSync, type Stats } from 'node:fs';
import { decodeName, INERT_GIT_CONFIG_MAX_BYTES, type NewGitDirEntry, NewGitDirJudge, type NewGitDirVerdict, readRegularSync } from '@aalis/core';
import { atFd } from './host-walk.js';
import { walkTree } from './dir-cursor.js';

/*
 * A new `.git` folder of the upper layer, where the host has none, is committed when core's
 * `NewGitDirJudge` finds it inert (its hooks only git's samples, its config only what git writes
 * when it makes a repository); anything else leaves it the landing it was, refused with the reason
 * said. An existing repository's hooks and config stay landings whatever is written there.
 */

/** What a new `.git` folder of the upper layer is: inert data, or why not. */
export type NewRepositoryVerdict = NewGitDirVerdict;

function kindOf(st: Stats): NewGitDirEntry['kind'] {
  return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
}

/**
 * Judges the upper layer's new `.git` folder `name` (in the directory open at `upperFd`), walked
 * by descriptors without following a link. The command is gone, so nothing changes it meanwhile.
 */
export function newRepositoryVerdict(upperFd: number, name: Buffer, open: (dirFd: number, name: Buffer) => number | undefined, bare = false): NewRepositoryVerdict {
  let why: string | undefined;
  const judge = new NewGitDirJudge(bare);
  const walked = walkTree(
    upperFd,
    name,
    '',
    (dir, n) => (dir === '' ? decodeName(n) : `${dir}/${decodeName(n)}`),
    (d, n, rel) => {
      const st = lstatSync(atFd(d, n));
      // the upper layer's link count: a tree committed by one rename keeps its hard links on the host
      why = judge.problem({ rel, kind: kindOf(st), links: st.nlink }, () => readRegularSync(atFd(d, n), { maxBytes: INERT_GIT_CONFIG_MAX_BYTES, follow: false }));
      if (why !== undefined) return 'stop';
      return st.isDirectory() ? 'descend' : 'leaf';
    },
    open,
  );
  return walked && why === undefined ? { inert: true } : { inert: false, why: why ?? 'it could not be read whole' };
}

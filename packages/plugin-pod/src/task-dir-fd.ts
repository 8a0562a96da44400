// A task's directory reached by descriptors, never by a path someone else could swap: the pod root
// or a task's own code may turn a directory into a symlink at any moment (found by an attack:
// `pod clean` removed by path and deleted outside the pod while another user swapped names).
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { atFd, HAS_PROC_FD, openDirNoFollow } from '@aalis/core';
import { PodError } from './errors.js';

/** A directory's identity (device and inode), kept when the pod makes a task's directory. */
export interface DirIdentity {
  readonly dev: number;
  readonly ino: number;
}

/**
 * Opens the directory at the real path `path`, from `/` one name at a time without following a
 * symlink: a name swapped for a link or a file anywhere on the way gives undefined, never
 * another place. Linux only (it walks through /proc/self/fd); elsewhere it refuses, failing closed.
 */
export function openRealDir(path: string): number | undefined {
  if (!HAS_PROC_FD) {
    throw new PodError('bad-sandbox-root', `the pod cannot reach ${path} by descriptor on this platform, so it refused to touch it.`, 'Remove the directory by hand after checking what it holds.');
  }
  let fd = openSync('/', constants.O_RDONLY | constants.O_DIRECTORY);
  for (const name of path.split('/').filter((n) => n !== '')) {
    let next: number | undefined;
    try {
      next = openDirNoFollow(atFd(fd, Buffer.from(name)));
    } finally {
      closeSync(fd);
    }
    if (next === undefined) return undefined;
    fd = next;
  }
  return fd;
}

/** The identity of the directory open at `fd`. */
export function identityOf(fd: number): DirIdentity {
  const st = fstatSync(fd);
  return { dev: st.dev, ino: st.ino };
}

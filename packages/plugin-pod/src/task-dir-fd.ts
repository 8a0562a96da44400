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

/**
 * Refuses a task's directory that is no longer the one the pod made (its device and inode differ,
 * or it is gone or a link): someone with a hand on the sandbox root put another in its place, and
 * the pod must not write the task's log or run its code there. Records from before the identity
 * was kept (no `id`) pass.
 */
export function checkSameTaskDir(dirs: { readonly base: string; readonly id?: DirIdentity | undefined }): void {
  if (dirs.id === undefined) return;
  const fd = openRealDir(dirs.base);
  if (fd === undefined) throw new PodError('bad-sandbox-root', `the task directory ${dirs.base} is gone or was swapped for a link; nothing more is written there.`, 'Check who writes in the sandbox root; choose a root only you can write.');
  try {
    const now = identityOf(fd);
    if (now.dev !== dirs.id.dev || now.ino !== dirs.id.ino) {
      throw new PodError('bad-sandbox-root', `the task directory ${dirs.base} is not the one the pod made (it was replaced); nothing more is written there.`, 'Check who writes in the sandbox root; choose a root only you can write.');
    }
  } finally {
    closeSync(fd);
  }
}

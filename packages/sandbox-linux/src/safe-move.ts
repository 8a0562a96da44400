import { closeSync, fstatSync, lstatSync, renameSync, statSync } from 'node:fs';
import { AalisError, decodeName, printablePath, removeTreeAt as removeAt } from '@aalis/core';
import { type CopySeam, copyAt } from './copy-tree.js';
import type { LinuxErrorCode } from './linux-error-codes.js';
import { atFd, openDir } from './host-walk.js';
import { DirMovedError } from './dir-cursor.js';

/*
 * Host-side changes the looks make, always relative to an open directory (`atFd`): rename(2) and
 * unlink(2) never follow a final symlink, and the directory is the one that was judged, wherever
 * it has been moved since. Nothing here resolves a path under the workspace from its start.
 */

/** A directory's identity: device and inode. */
export interface DirId {
  readonly dev: bigint;
  readonly ino: bigint;
}

/** The identity of the directory open at `fd`, or at a path. */
export function dirId(at: number | string): DirId {
  const st = typeof at === 'number' ? fstatSync(at, { bigint: true }) : statSync(at, { bigint: true });
  return { dev: st.dev, ino: st.ino };
}

const DOTDOT = Buffer.from('..');

/**
 * Whether the directory open at `fd` still lies `levels` levels under `root`: its parents are
 * followed by `..` from the descriptor (no path, so no PATH_MAX) and the last one's device and
 * inode compared with the root's. A directory a host program moved out of the writable roots
 * since it was listed fails, and its entries are left alone.
 */
export function liesUnder(fd: number, levels: number, root: DirId): boolean {
  // one parent open at a time: any depth with two descriptors
  let cur = fd;
  try {
    for (let i = 0; i < levels; i++) {
      const up = openDir(atFd(cur, DOTDOT));
      if (cur !== fd) closeSync(cur);
      cur = fd;
      if (up === undefined) return false;
      cur = up;
    }
    const id = dirId(cur);
    return id.dev === root.dev && id.ino === root.ino;
  } finally {
    if (cur !== fd) closeSync(cur);
  }
}

/**
 * Moves `name` out of the directory open at `fd` to `dest` (a path in the daemon's own folder).
 * Across file systems (EXDEV) it copies the tree ({@link copyAt}: iterative, by descriptors, links
 * copied as links) and removes the source only once the copy is whole; when the copy fails (a
 * directory moved meanwhile, no space, unreadable) the partial copy is removed, the source stays
 * and the error says so: nothing is reported as moved that was not.
 */
export function moveAt(fd: number, name: Buffer, dest: Buffer, seam?: CopySeam): void {
  try {
    renameSync(atFd(fd, name), dest);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
  }
  // the copy's top must be new: what is already at `dest` (an entry moved there earlier) is never touched
  if (existsNoFollow(dest)) throw new MoveFailedError(`${printablePath(decodeName(name))} could not be moved across file systems: ${printablePath(decodeName(dest))} exists already; it was left in place`);
  try {
    copyAt(fd, name, dest, seam);
  } catch (e) {
    const dropped = dropPartial(dest);
    const why = e instanceof DirMovedError ? 'a directory in it was moved or replaced while it was being copied' : (e as Error).message;
    throw new MoveFailedError(`${printablePath(decodeName(name))} could not be moved across file systems (${why}): it was left in place${dropped ? ' and the partial copy removed' : ''}`);
  }
  removeAt(fd, name);
}

function existsNoFollow(path: Buffer): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/** A tree that could not be moved across file systems: the source is where it was. */
export class MoveFailedError extends AalisError<LinuxErrorCode> {
  constructor(message: string) {
    super('move-failed', message);
  }
}

/** Removes what a failed copy made at `dest` (its parent is the daemon's folder, reached by path; the tree below by descriptors); whether it is gone. */
function dropPartial(dest: Buffer): boolean {
  const slash = dest.lastIndexOf('/');
  try {
    const parent = openDir(slash <= 0 ? Buffer.from('/') : dest.subarray(0, slash));
    if (parent === undefined) return false;
    try {
      removeAt(parent, dest.subarray(slash + 1));
      return true;
    } finally {
      closeSync(parent);
    }
  } catch {
    return false; // left in the daemon's own folder, never visible in a sandbox
  }
}

// the removal of a tree by descriptors is core's (fd-tree.ts), used by the docker backend too
export { type RemoveSeam, removeTreeAt as removeAt } from '@aalis/core';

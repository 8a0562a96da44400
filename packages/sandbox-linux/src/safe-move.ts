import { closeSync, fstatSync, lstatSync, renameSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { AalisError } from '@aalis/core';
import { type CopySeam, copyAt } from './copy-tree.js';
import type { LinuxErrorCode } from './linux-error-codes.js';
import { decodeName, printablePath } from './host-names.js';
import { atFd, openDir } from './host-walk.js';
import { type DirId as CursorId, DirMovedError, idOf, namesIn, upTo } from './dir-cursor.js';

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

/** For tests only: a point inside {@link removeAt} where the host can be changed deterministically. */
export interface RemoveSeam {
  /** Called before each entry under the tree's top is removed, with the open directory holding it. */
  readonly beforeEntry?: (dirFd: number, name: Buffer) => void;
}

/** One directory being emptied: its name in its parent, its parent's identity (checked on the way back up) and its names. */
interface RemoveFrame {
  readonly name: Buffer;
  readonly parentId: CursorId;
  readonly names: readonly Buffer[];
  i: number;
}

/**
 * Removes an entry (a tree) without following any symlink in it. Iterative, with its stack on the
 * heap and at most two descriptors open besides `fd`: it goes down by name relative to the open
 * directory (`O_NOFOLLOW`, so a directory swapped for a symlink is unlinked as a link, never
 * entered) and back up through `..`, checking it reached the directory it left (device and inode);
 * a directory moved meanwhile ends the removal with `DirMovedError` and nothing outside is touched.
 * So no depth (PATH_MAX, the call stack, the descriptor limit) stops it.
 */
export function removeAt(fd: number, name: Buffer, seam?: RemoveSeam): void {
  let cur = enterOrUnlink(fd, name);
  if (cur === undefined) return;
  const frames: RemoveFrame[] = [];
  try {
    frames.push({ name, parentId: idOf(fd), names: namesIn(cur), i: 0 });
    while (frames.length > 0) {
      const top = frames.at(-1)!;
      if (top.i < top.names.length) {
        const n = top.names[top.i++]!;
        seam?.beforeEntry?.(cur, n);
        const d = enterOrUnlink(cur, n);
        if (d === undefined) continue;
        try {
          frames.push({ name: n, parentId: idOf(cur), names: namesIn(d), i: 0 });
        } catch (e) {
          closeSync(d);
          throw e;
        }
        closeSync(cur);
        cur = d;
        continue;
      }
      // everything in `cur` is gone: back up to its parent (checked) and remove it there by name
      frames.pop();
      const up = upTo(cur, top.parentId); // closes cur
      cur = up;
      rmdirSync(atFd(up, top.name));
    }
  } finally {
    closeSync(cur);
  }
}

/**
 * Unlinks `name` in the directory open at `fd` if it is anything but a directory (a symlink to a
 * directory included) and returns undefined; a directory is opened (not followed) and returned.
 */
function enterOrUnlink(fd: number, name: Buffer): number | undefined {
  const at = atFd(fd, name);
  for (let tries = 0; tries < 3; tries++) {
    try {
      unlinkSync(at);
      return undefined;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code !== 'EISDIR' && code !== 'EPERM') throw e;
    }
    const dir = openDir(at);
    if (dir !== undefined) return dir;
    // swapped for a file or a symlink between the unlink and the open: unlink that
  }
  throw new Error('an entry kept changing between a file and a directory while it was being removed');
}

import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { AalisError } from './aalis-error.js';

/*
 * Trees walked and removed by descriptors (Linux, /proc/self/fd), never by a path a concurrent
 * writer could swap: down by name relative to the open directory (O_NOFOLLOW, so a directory
 * swapped for a symlink is a link, never entered), back up through `..`, checking the directory
 * reached is the one left (device and inode). The stack of names lives on the heap: any depth,
 * a fixed number of open descriptors. Used by the Linux sandbox's commit and looks, and by the
 * docker backend's removal of what a command was refused (found by an attack: its removal by path
 * followed a parent another container had swapped for a symlink, and deleted outside the workspace).
 */

const DIR_UP = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Errors that mean "not a directory any more" (swapped for a symlink or a file, or gone) rather than "cannot look". */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);

/** A directory's identity, to check a return through `..`. */
export interface DirId {
  readonly dev: number;
  readonly ino: number;
}

/** The identity of the directory open at `fd`. */
export function idOf(fd: number): DirId {
  const st = fstatSync(fd);
  return { dev: st.dev, ino: st.ino };
}

/** A directory moved while a walk was under it: the walk cannot go back up safely, and stops. */
export class DirMovedError extends AalisError<'dir-moved'> {
  constructor(message: string) {
    super('dir-moved', message);
  }
}

/** `name` inside the directory open at `fd`, as a path the kernel resolves from that descriptor. */
export function atFd(fd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
}

/** Opens a directory without following a symlink at its last component; undefined when it is not a directory (any more). */
export function openDirNoFollow(path: Buffer | string): number | undefined {
  try {
    return openSync(path, DIR_FLAGS);
  } catch (e) {
    if (GONE.has((e as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw e;
  }
}

/** Opens the parent of the directory open at `fd` and closes `fd`; throws {@link DirMovedError} when the parent is not `expect`. */
export function upTo(fd: number, expect: DirId): number {
  const up = openSync(atFd(fd, Buffer.from('..')), DIR_UP);
  const id = idOf(up);
  if (id.dev !== expect.dev || id.ino !== expect.ino) {
    closeSync(up);
    throw new DirMovedError('a directory was moved while it was being walked');
  }
  closeSync(fd);
  return up;
}

/** The names in the directory open at `fd`, as bytes. */
export const namesIn = (fd: number): Buffer[] => readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });

/** For tests only: a point inside {@link removeTreeAt} where the host can be changed deterministically. */
export interface RemoveSeam {
  /** Called before each entry under the tree's top is removed, with the open directory holding it. */
  readonly beforeEntry?: (dirFd: number, name: Buffer) => void;
}

/** One directory being emptied: its name in its parent, its parent's identity (checked on the way back up) and its names. */
interface RemoveFrame {
  readonly name: Buffer;
  readonly parentId: DirId;
  readonly names: readonly Buffer[];
  i: number;
}

/**
 * Removes the entry `name` (a tree) of the directory open at `fd` without following any symlink in
 * it. Iterative, with at most two descriptors open besides `fd`; a directory moved meanwhile ends
 * the removal with {@link DirMovedError} and nothing outside is touched. No depth (PATH_MAX, the
 * call stack, the descriptor limit) stops it.
 */
export function removeTreeAt(fd: number, name: Buffer, seam?: RemoveSeam): void {
  const mount = mountIdOf(fd);
  let cur = enterOrUnlink(fd, name);
  if (cur === undefined) return;
  const frames: RemoveFrame[] = [];
  try {
    refuseMountPoint(cur, mount);
    frames.push({ name, parentId: idOf(fd), names: namesIn(cur), i: 0 });
    while (frames.length > 0) {
      const top = frames.at(-1)!;
      if (top.i < top.names.length) {
        const n = top.names[top.i++]!;
        seam?.beforeEntry?.(cur, n);
        const d = enterOrUnlink(cur, n);
        if (d === undefined) continue;
        try {
          refuseMountPoint(d, mount);
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

/** A mount point met inside a tree being removed: what is mounted there is not the tree's, and stays. */
export class MountInTreeError extends AalisError<'mount-in-tree'> {
  constructor(message: string) {
    super('mount-in-tree', message);
  }
}

/**
 * The mount the file open at `fd` lies on (`mnt_id` of /proc/self/fdinfo): a bind mount of the
 * same file system has the same device, and only its mount id tells it apart.
 */
export function mountIdOf(fd: number): number {
  const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
  const id = /^mnt_id:\s*(\d+)$/m.exec(info)?.[1];
  if (id === undefined) throw new Error(`the mount of descriptor ${fd} cannot be read (no mnt_id in /proc/self/fdinfo)`);
  return Number(id);
}

/**
 * Refuses a directory on another mount than the tree's top: a folder bound or mounted under the
 * tree is another place (the user's, a device), and `..` at its root leads back up the tree, so
 * the identity check on the way back passed and the removal emptied it (found by an attack: a
 * bind mount's source was emptied, then rmdir failed with EBUSY).
 */
function refuseMountPoint(fd: number, mount: number): void {
  if (mountIdOf(fd) === mount) return;
  throw new MountInTreeError('a mount point lies inside the tree being removed; what is mounted there was left as it is');
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
    const dir = openDirNoFollow(at);
    if (dir !== undefined) return dir;
    // swapped for a file or a symlink between the unlink and the open: unlink that
  }
  throw new Error('an entry kept changing between a file and a directory while it was being removed');
}

import { closeSync, constants, type Dirent, openSync, readdirSync } from 'node:fs';
import { decodeName, encodePath } from './host-names.js';

/*
 * The one walk of the host that the scan and the looks share. It never follows a symlink and never
 * resolves a long path: every directory is opened relative to its parent's open descriptor
 * (`/proc/self/fd/<fd>/<name>` with O_NOFOLLOW|O_DIRECTORY, the openat(2) Node lacks), so a
 * directory swapped for a symlink mid-walk is not entered (the open fails), a directory moved
 * elsewhere is still the one judged (the descriptor follows the inode), and depth is limited by
 * nothing but open descriptors, never by PATH_MAX. Names are bytes, decoded reversibly
 * (host-names.ts).
 */

/** What a directory entry is, as far as the walk is concerned (symlinks are never followed). */
export const ENTRY_TYPES = ['dir', 'file', 'symlink', 'other'] as const;
/** One of {@link ENTRY_TYPES}. */
export type EntryType = (typeof ENTRY_TYPES)[number];

/** One entry the walk met; `dirFd` is valid only during the callback. */
export interface WalkEntry {
  /** The open directory holding the entry: act on the entry through {@link atFd}, never by `path`. */
  readonly dirFd: number;
  readonly name: Buffer;
  /** The whole path, names decoded by `decodeName` (for the rules and for mounts). */
  readonly path: string;
  readonly type: EntryType;
  /** 1 for a child of the root. */
  readonly depth: number;
}

/** What the walk asks of its user. */
export interface Walker {
  /** Every entry, parents before children; return true to descend into a directory. */
  entry(e: WalkEntry): boolean;
  /** A directory the walk could not open or list (no permission): it may hide anything. */
  unreadable(path: string, code: string): void;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Errors that mean "not a directory any more" (swapped for a symlink or a file, or gone) rather than "cannot look". */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);
const DENIED = new Set(['EACCES', 'EPERM']);

/** `name` inside the directory open at `fd`, as a path the kernel resolves from that descriptor. */
export function atFd(fd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
}

function typeOf(e: Dirent<Buffer>): EntryType {
  if (e.isDirectory()) return 'dir';
  if (e.isSymbolicLink()) return 'symlink';
  return e.isFile() ? 'file' : 'other';
}

/** Opens a directory without following a symlink at its last component; undefined when it is not a directory (any more). */
export function openDir(path: Buffer | string): number | undefined {
  try {
    return openSync(path, DIR_FLAGS);
  } catch (e) {
    if (GONE.has((e as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw e;
  }
}

interface Frame {
  readonly fd: number;
  readonly path: string;
  readonly entries: Dirent<Buffer>[];
  i: number;
  readonly depth: number;
}

/**
 * Walks the tree under `root` (a real path), depth first, down to `maxDepth` levels. Returns the
 * number of entries met. A directory that cannot be opened or listed for lack of permission is
 * reported to {@link Walker.unreadable}; any other error (out of descriptors, I/O) throws, so no
 * caller goes on with half a walk.
 */
export function walkTree(root: string, walker: Walker, maxDepth = Number.POSITIVE_INFINITY): number {
  let visited = 0;
  const stack: Frame[] = [];
  const enter = (path: string, open: () => number | undefined, depth: number): void => {
    let fd: number | undefined;
    try {
      fd = open();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (!DENIED.has(code)) throw e;
      walker.unreadable(path, code);
      return;
    }
    if (fd === undefined) return;
    let entries: Dirent<Buffer>[];
    try {
      entries = readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer', withFileTypes: true });
    } catch (e) {
      closeSync(fd);
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (GONE.has(code)) return; // removed while open
      if (!DENIED.has(code)) throw e;
      walker.unreadable(path, code);
      return;
    }
    stack.push({ fd, path, entries, i: 0, depth });
  };
  enter(root, () => openDir(encodePath(root)), 0);
  try {
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.entries.length) {
        closeSync(top.fd);
        stack.pop();
        continue;
      }
      const e = top.entries[top.i++]!;
      visited += 1;
      const path = top.path === '/' ? `/${decodeName(e.name)}` : `${top.path}/${decodeName(e.name)}`;
      const type = typeOf(e);
      const depth = top.depth + 1;
      const descend = walker.entry({ dirFd: top.fd, name: e.name, path, type, depth });
      if (descend && type === 'dir' && depth < maxDepth) enter(path, () => openDir(atFd(top.fd, e.name)), depth);
    }
  } finally {
    for (const f of stack) closeSync(f.fd);
  }
  return visited;
}

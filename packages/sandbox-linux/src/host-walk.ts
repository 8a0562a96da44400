import { closeSync, type Dirent, fstatSync, lstatSync, readdirSync } from 'node:fs';
import { atFd, decodeName, encodePath, openDirNoFollow as openDir } from '@aalis/core';
import { StampedDevices } from './stamped-file-system.js';
import { type DirId, DirMovedError, idOf } from './dir-cursor.js';
import { isWithin } from './rule-match.js';

/*
 * The one walk of the host that the scan and the looks share. It never follows a symlink and never
 * resolves a long path: every directory is opened relative to its parent's open descriptor
 * (`/proc/self/fd/<fd>/<name>` with O_NOFOLLOW|O_DIRECTORY, the openat(2) Node lacks), so a
 * directory swapped for a symlink mid-walk is not entered (the open fails). The first
 * {@link KEEP_OPEN} levels keep their descriptors, so a directory moved elsewhere there is still the
 * one judged (the descriptor follows the inode); below them only the directory being listed is open
 * and the walk climbs back through `..`, checking it reaches the directory it left (device and
 * inode, as dir-cursor.ts does for the commit): a directory moved meanwhile ends the walk with
 * {@link DirMovedError}. So depth is bounded by memory, never by the descriptor limit or PATH_MAX.
 * Names are bytes, decoded reversibly (host-names.ts).
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
  /**
   * Asked before a directory (the root included) is opened: a number means its whole subtree is
   * already accounted for by the caller (that many entries) and it is not opened. See scan.ts's memo.
   */
  reuse?(path: string): number | undefined;
  /** A directory was opened and listed; {@link left} follows once everything under it was walked. */
  entered?(path: string): void;
  /** Everything under a directory {@link entered} has been walked: `visited` entries counted in it. */
  left?(path: string, visited: number): void;
  /**
   * A directory whose entries the walk took into account, with its identity as it was then and
   * when (ns since the epoch, taken before the look): what a later look may compare (scan-reuse.ts).
   * Walks with a {@link ListingCache} stat every directory anyway; one without stats each only for this hook.
   */
  listed?(path: string, stamp: DirStamp, at: bigint): void;
}

/** A directory's device, inode and ctime: together they change whenever one of its entries does. */
export interface DirStamp {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly ctimeNs: bigint;
}

/** Errors that mean "not a directory any more" (swapped for a symlink or a file, or gone) rather than "cannot look". */
const GONE = new Set(['ENOENT', 'ENOTDIR', 'ELOOP']);
const DENIED = new Set(['EACCES', 'EPERM']);

// `name` in an open directory, and a directory opened without following a symlink: core's (fd-tree.ts)
export { atFd, openDirNoFollow as openDir } from '@aalis/core';

function typeOf(e: Dirent<Buffer>): EntryType {
  if (e.isDirectory()) return 'dir';
  if (e.isSymbolicLink()) return 'symlink';
  return e.isFile() ? 'file' : 'other';
}


/** One entry as the walk keeps it: its name and type (the full path is built on the way down). */
interface Listed {
  readonly name: Buffer;
  readonly type: EntryType;
}

interface Frame {
  /** Open while the walk is in this directory or it is one of the first {@link KEEP_OPEN} levels. */
  fd: number | undefined;
  /** Taken when `fd` is closed, to check the climb back through `..`. */
  id?: DirId;
  readonly path: string;
  readonly entries: readonly Listed[];
  i: number;
  readonly depth: number;
  /** Entries counted before this directory was entered. */
  readonly start: number;
}

interface CachedListing {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly ctime: bigint;
  /** Whether a later change is sure to show in the ctime (see {@link ListingCache}). */
  readonly settled: boolean;
  readonly entries: readonly Listed[];
  readonly count: number;
}

/**
 * Levels whose directories stay open while the walk is under them. Deeper, a directory is closed
 * when the walk goes into a subdirectory and reopened through `..` on the way back (one open and
 * fstat more per directory left), so a walk holds at most this many descriptors plus one.
 */
export const KEEP_OPEN = 32;

const DOTDOT = Buffer.from('..');

/** Opens the parent of the directory open at `fd` and checks it is `frame`'s directory; `fd` stays open. */
function climb(fd: number, frame: Frame, root: string): number {
  const up = openDir(atFd(fd, DOTDOT));
  const id = up === undefined ? undefined : idOf(up);
  if (up === undefined || id!.dev !== frame.id!.dev || id!.ino !== frame.id!.ino) {
    if (up !== undefined) closeSync(up);
    const where = frame.path.length <= 300 ? frame.path : `a directory ${frame.depth} levels under ${root}`;
    throw new DirMovedError(
      `a directory under ${where} was moved (or removed) while the walk of the host was under it: the walk stopped and nothing is judged from half a walk; run the command again once that tree holds still`,
    );
  }
  return up;
}

/** Directories one {@link ListingCache} keeps at most. */
const MAX_KEPT_DIRS = 300_000;

/** How long a directory must have been unchanged when it was listed for its ctime to tell every later change (clock ticks, clock skew). */
const SETTLED_NS = 2_000_000_000n;

/**
 * Listings kept between walks, for one `keep` predicate: a directory whose device, inode and
 * ctime are what they were when it was listed has the same entries, and is not read again (one
 * open and fstat instead of a readdir and a match per entry). The ctime, not the mtime: no
 * unprivileged program can set it back. The kernel stamps it with a coarse clock, so a directory
 * changed shortly before it was listed could change again within the same tick unnoticed: such a
 * listing (ctime less than {@link SETTLED_NS} before the listing) is not trusted and read again
 * next time. Only the entries `keep` wants are kept (the directories, and the pattern matches).
 */
export class ListingCache {
  private readonly map = new Map<string, CachedListing>();
  constructor(readonly keep: (path: string, type: EntryType) => boolean) {}

  /**
   * Entries counted in `path` when it is a directory the walk need not open at all: its kept
   * listing holds nothing (no subdirectory, no match) and `lstat` through its parent's descriptor
   * still shows the same device, inode and ctime, on a file system of `stamped`'s. Undefined
   * otherwise (open and list it).
   */
  emptyLeaf(path: string, parentFd: number, name: Buffer, seen: ((stamp: DirStamp, at: bigint) => void) | undefined, stamped: StampedDevices): number | undefined {
    const c = this.map.get(path);
    if (!c?.settled || c.entries.length > 0) return undefined;
    let st: DirStamp;
    const at = nowNs();
    try {
      st = lstatSync(atFd(parentFd, name), { bigint: true });
    } catch {
      return undefined; // gone or unreachable: opening it says which
    }
    if (!this.get(path, st)) return undefined;
    if (!stamped.has(st.dev, atFd(parentFd, name))) return undefined; // listed afresh: its stamp does not tell
    seen?.(st, at);
    return c.count;
  }

  /** The listing of `path` if it is still what the directory open at `fd` holds. */
  get(path: string, st: DirStamp): CachedListing | undefined {
    const c = this.map.get(path);
    if (!c?.settled || c.dev !== st.dev || c.ino !== st.ino || c.ctime !== st.ctimeNs) return undefined;
    return c;
  }

  set(path: string, listing: CachedListing): void {
    // a bound on memory (about 110 MB for 177,000 directories): past it, start again
    if (this.map.size >= MAX_KEPT_DIRS && !this.map.has(path)) this.map.clear();
    this.map.set(path, listing);
  }

  /** Forgets every listing at or under `root` (a tree the index answers for needs none). */
  dropUnder(root: string): void {
    for (const path of this.map.keys()) if (isWithin(path, root)) this.map.delete(path);
  }

  /** Directories kept. */
  get size(): number {
    return this.map.size;
  }
}

/**
 * Walks the tree under `root` (a real path), depth first, down to `maxDepth` levels. Returns the
 * number of entries met. A directory that cannot be opened or listed for lack of permission is
 * reported to {@link Walker.unreadable}; any other error (out of descriptors, I/O) throws, so no
 * caller goes on with half a walk. With a {@link ListingCache}, only the entries it keeps reach
 * the walker, and unchanged directories are not read again.
 */
export function walkTree(root: string, walker: Walker, maxDepth = Number.POSITIVE_INFINITY, cache?: ListingCache): number {
  let visited = 0;
  const stamped = new StampedDevices();
  const stack: Frame[] = [];
  const list = (fd: number, path: string): readonly Listed[] => {
    if (!cache) {
      // a walk without kept listings still says what it listed when asked (a scan kept in a file, scan-reuse-file.ts)
      if (walker.listed) {
        const now = nowNs();
        walker.listed(path, fstatSync(fd, { bigint: true }), now);
      }
      const all = readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer', withFileTypes: true }).map((e) => ({ name: e.name, type: typeOf(e) }));
      visited += all.length;
      return all;
    }
    const now = nowNs(); // before the listing: a change after it has a later ctime
    const st = fstatSync(fd, { bigint: true });
    walker.listed?.(path, st, now);
    // only where the kernel keeps the stamp: elsewhere it need not change with the entries (stamped-file-system.ts)
    if (!stamped.has(st.dev, `/proc/self/fd/${fd}`)) {
      const all = readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer', withFileTypes: true }).map((e) => ({ name: e.name, type: typeOf(e) }));
      visited += all.length;
      return all;
    }
    const hit = cache.get(path, st);
    if (hit) {
      visited += hit.count;
      return hit.entries;
    }
    const all = readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer', withFileTypes: true });
    const entries: Listed[] = [];
    for (const e of all) {
      const type = typeOf(e);
      if (type === 'dir' || cache.keep(childPath(path, e.name), type)) entries.push({ name: e.name, type });
    }
    cache.set(path, { dev: st.dev, ino: st.ino, ctime: st.ctimeNs, settled: st.ctimeNs < now - SETTLED_NS, entries, count: all.length });
    visited += all.length;
    return entries;
  };
  const enter = (path: string, open: () => number | undefined, depth: number): void => {
    const start = visited;
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
    let entries: readonly Listed[];
    try {
      entries = list(fd, path);
    } catch (e) {
      closeSync(fd);
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (GONE.has(code)) return; // removed while open
      if (!DENIED.has(code)) throw e;
      walker.unreadable(path, code);
      return;
    }
    // deep down, the parent is closed while the walk is in its subdirectory (reopened through `..`)
    const parent = stack.at(-1);
    if (parent !== undefined && stack.length > KEEP_OPEN) {
      parent.id = idOf(parent.fd!);
      closeSync(parent.fd!);
      parent.fd = undefined;
    }
    stack.push({ fd, path, entries, i: 0, depth, start });
    walker.entered?.(path);
  };
  const reused = walker.reuse?.(root);
  if (reused !== undefined) return reused;
  enter(root, () => openDir(encodePath(root)), 0);
  try {
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i >= top.entries.length) {
        stack.pop();
        const parent = stack.at(-1);
        try {
          if (parent !== undefined && parent.fd === undefined) parent.fd = climb(top.fd!, parent, root);
        } finally {
          closeSync(top.fd!);
        }
        walker.left?.(top.path, visited - top.start);
        continue;
      }
      const e = top.entries[top.i++]!;
      const path = childPath(top.path, e.name);
      const depth = top.depth + 1;
      const dirFd = top.fd!; // the directory being listed is always open
      const descend = walker.entry({ dirFd, name: e.name, path, type: e.type, depth });
      if (!descend || e.type !== 'dir' || depth >= maxDepth) continue;
      const known = walker.reuse?.(path);
      if (known !== undefined) {
        visited += known;
        continue;
      }
      const leaf = cache?.emptyLeaf(path, dirFd, e.name, walker.listed && ((st, at) => walker.listed!(path, st, at)), stamped); // one lstat instead of open, fstat, close
      if (leaf !== undefined) visited += leaf;
      else enter(path, () => openDir(atFd(dirFd, e.name)), depth);
    }
  } finally {
    for (const f of stack) if (f.fd !== undefined) closeSync(f.fd);
  }
  return visited;
}

/** The wall clock in ns, as ctimes are kept. */
function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

function childPath(dir: string, name: Buffer): string {
  return dir === '/' ? `/${decodeName(name)}` : `${dir}/${decodeName(name)}`;
}

const caches = new Map<string, ListingCache>();

/**
 * The {@link ListingCache} of this thread for a set of patterns (the scan and the looks of one
 * policy share it). A few are kept; the oldest goes when a fifth set of patterns comes.
 */
export function listingCacheFor(key: string, keep: (path: string, type: EntryType) => boolean): ListingCache {
  let c = caches.get(key);
  if (!c) {
    if (caches.size >= 4) caches.delete(caches.keys().next().value!);
    c = new ListingCache(keep);
    caches.set(key, c);
  }
  return c;
}

/** Directories whose listings this thread keeps, over all its caches. */
export function keptDirectories(): number {
  let n = 0;
  for (const c of caches.values()) n += c.size;
  return n;
}

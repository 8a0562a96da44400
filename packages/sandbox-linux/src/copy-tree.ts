import { spawnSync } from 'node:child_process';
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, readlinkSync, readSync, symlinkSync, writeSync } from 'node:fs';
import { type DirId, DirMovedError, idOf, namesIn, upTo } from './dir-cursor.js';
import { atFd, openDir } from './host-walk.js';

/*
 * The copy half of a move across file systems (safe-move.ts's moveAt). Like removeAt it is
 * iterative, with its stack on the heap and two directories open at a time (the source's and the
 * copy's): it goes down by name relative to each (O_NOFOLLOW: a directory swapped for a symlink is
 * copied as the link, never entered) and back up through `..`, checking on both sides that it
 * reached the directory it left (device and inode). So no depth (PATH_MAX, the call stack, the
 * descriptor limit) stops it, and a directory moved meanwhile ends the copy with DirMovedError.
 */

/** For tests only: a point inside {@link copyAt} where the host can be changed deterministically. */
export interface CopySeam {
  /** Called before each entry under the tree's top is copied, with the open source directory holding it. */
  readonly beforeEntry?: (dirFd: number, name: Buffer) => void;
}

/** One directory being copied: the identities of its source and copy parents (checked on the way back up) and its names. */
interface CopyFrame {
  readonly srcParent: DirId;
  readonly dstParent: DirId;
  readonly names: readonly Buffer[];
  i: number;
}

const DIR_MADE = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Copies the entry `name` of the directory open at `fd` (a tree) to `dest`, a fresh path (made with
 * mode 0700 or 0600). A symlink is copied as a link, a regular file by its bytes (each hard link
 * as a file of its own: the copy never shares an inode with the source), a socket, fifo or device
 * not at all (nothing to keep). An entry gone meanwhile is skipped. Throws on anything else
 * (unreadable, out of space, {@link DirMovedError}); what was copied so far is then left at
 * `dest` for the caller to remove.
 */
export function copyAt(fd: number, name: Buffer, dest: Buffer, seam?: CopySeam): void {
  let src = openDir(atFd(fd, name));
  if (src === undefined) {
    copyLeaf(fd, name, dest);
    return;
  }
  let dst: number | undefined;
  try {
    mkdirSync(dest, { mode: 0o700 });
    dst = openSync(dest, DIR_MADE);
    const frames: CopyFrame[] = [{ srcParent: idOf(fd), dstParent: idOf(dst), names: namesIn(src), i: 0 }];
    while (frames.length > 0) {
      const top = frames.at(-1)!;
      if (top.i === top.names.length) {
        frames.pop();
        if (frames.length === 0) break;
        src = upTo(src, top.srcParent); // closes the old one
        dst = upTo(dst, top.dstParent);
        continue;
      }
      const n = top.names[top.i++]!;
      seam?.beforeEntry?.(src, n);
      const d = openDir(atFd(src, n));
      if (d === undefined) {
        copyLeaf(src, n, atFd(dst, n));
        continue;
      }
      let made: number | undefined;
      try {
        mkdirSync(atFd(dst, n), { mode: 0o700 });
        made = openSync(atFd(dst, n), DIR_MADE);
        frames.push({ srcParent: idOf(src), dstParent: idOf(dst), names: namesIn(d), i: 0 });
      } catch (e) {
        closeSync(d);
        if (made !== undefined) closeSync(made);
        throw e;
      }
      closeSync(src);
      closeSync(dst);
      src = d;
      dst = made;
    }
  } finally {
    closeSync(src);
    if (dst !== undefined) closeSync(dst);
  }
}

/** Copies one entry that is not a directory; `dest` is a path (resolved from an open descriptor below the top). */
function copyLeaf(fd: number, name: Buffer, dest: Buffer): void {
  const at = atFd(fd, name);
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(at);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // gone meanwhile: nothing to keep
    throw e;
  }
  if (st.isSymbolicLink()) {
    symlinkSync(readlinkSync(at, { encoding: 'buffer' }), dest);
    return;
  }
  if (!st.isFile()) return; // a socket, fifo or device: never opened (a device's open can act)
  const from = openSync(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const now = fstatSync(from);
    // swapped for something else between the lstat and the open: copy what was judged or nothing
    if (!now.isFile() || now.ino !== st.ino || now.dev !== st.dev) throw new DirMovedError(`an entry was replaced while it was being copied`);
    const out = openSync(dest, 'wx', 0o600);
    try {
      copySparse(from, out);
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(from);
  }
}

const CHUNK = 1 << 16;
/** Past this size a file mostly of holes is copied by cp (see {@link copySparse}). */
const HOLEY_MIN = 64 * 1024 * 1024;

/** cp --sparse=always from one open descriptor of this process onto another; false when cp is not there or fails (then the loop copies). */
function copiedByCp(from: number, out: number): boolean {
  const r = spawnSync('cp', ['--sparse=always', `/proc/${process.pid}/fd/${from}`, `/proc/${process.pid}/fd/${out}`], { stdio: 'ignore', timeout: 600_000 });
  return r.status === 0;
}
const ZEROS = Buffer.alloc(CHUNK);

/**
 * Copies the file open at `from` into the empty file open at `out`, leaving a hole where the
 * source reads as zeros a whole chunk: a sparse file stays sparse (found by an attack: `truncate
 * -s 1G` in the sandbox, 4 KiB there, was written out as 1 GiB on the host, and a commit could
 * fill the disk). Returns the bytes copied (the file's length).
 */
export function copySparse(from: number, out: number): number {
  const st = fstatSync(from);
  // mostly holes and large: coreutils' cp steps over them (SEEK_DATA/SEEK_HOLE, which Node lacks);
  // read here, a 16 TiB `truncate` held the commit thread for hours (found by an attack). Through
  // this process's descriptors, so it copies exactly the files opened here.
  if (st.size > HOLEY_MIN && st.blocks * 512 < st.size / 8 && copiedByCp(from, out)) return fstatSync(out).size;
  const buf = Buffer.allocUnsafe(CHUNK);
  let at = 0;
  for (let n = readSync(from, buf, 0, CHUNK, null); n > 0; n = readSync(from, buf, 0, CHUNK, null)) {
    if (!(n === CHUNK ? buf.equals(ZEROS) : buf.subarray(0, n).equals(ZEROS.subarray(0, n)))) writeSync(out, buf, 0, n, at);
    at += n;
  }
  ftruncateSync(out, at); // the length, trailing holes included
  return at;
}

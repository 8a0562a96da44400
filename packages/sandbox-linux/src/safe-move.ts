import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, renameSync, rmdirSync, statSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { atFd, openDir } from './host-walk.js';

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
  const opened: number[] = [];
  try {
    let cur = fd;
    for (let i = 0; i < levels; i++) {
      const up = openDir(atFd(cur, DOTDOT));
      if (up === undefined) return false;
      opened.push(up);
      cur = up;
    }
    const id = dirId(cur);
    return id.dev === root.dev && id.ino === root.ino;
  } finally {
    for (const f of opened) closeSync(f);
  }
}

/** Moves `name` out of the directory open at `fd` to `dest` (a path in the daemon's own folder). Copies, then removes, across file systems. */
export function moveAt(fd: number, name: Buffer, dest: Buffer): void {
  try {
    renameSync(atFd(fd, name), dest);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
    copyAt(fd, name, dest);
    removeAt(fd, name);
  }
}

const NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Copies an entry (a tree) without following any symlink in it: a link is copied as a link. */
function copyAt(fd: number, name: Buffer, dest: Buffer): void {
  const dir = openDir(atFd(fd, name));
  if (dir !== undefined) {
    try {
      mkdirSync(dest, { mode: 0o700 });
      for (const n of readdirSync(`/proc/self/fd/${dir}`, { encoding: 'buffer' })) copyAt(dir, n, Buffer.concat([dest, Buffer.from('/'), n]));
    } finally {
      closeSync(dir);
    }
    return;
  }
  let src: number;
  try {
    src = openSync(atFd(fd, name), NOFOLLOW);
  } catch (e) {
    if (!['ELOOP', 'ENXIO'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    // ELOOP: a symlink, copied as one; ENXIO: a socket, nothing to keep
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') symlinkSync(readlinkSync(atFd(fd, name), { encoding: 'buffer' }), dest);
    return;
  }
  try {
    if (!fstatSync(src).isFile()) return; // a fifo or a device: nothing to keep
    const out = openSync(dest, 'wx', 0o600);
    try {
      const buf = Buffer.allocUnsafe(1 << 16);
      for (let n = readSync(src, buf); n > 0; n = readSync(src, buf)) writeSync(out, buf, 0, n);
    } finally {
      closeSync(out);
    }
  } finally {
    closeSync(src);
  }
}

/** Removes an entry (a tree) without following any symlink in it. */
export function removeAt(fd: number, name: Buffer, tries = 3): void {
  const at = atFd(fd, name);
  try {
    unlinkSync(at);
    return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'EISDIR' && code !== 'EPERM') throw e;
  }
  const dir = openDir(at);
  if (dir === undefined) {
    if (tries <= 1) throw new Error('an entry kept changing between a file and a directory while it was being removed');
    removeAt(fd, name, tries - 1); // swapped for a file meanwhile
    return;
  }
  try {
    for (const n of readdirSync(`/proc/self/fd/${dir}`, { encoding: 'buffer' })) removeAt(dir, n, tries);
  } finally {
    closeSync(dir);
  }
  rmdirSync(at);
}

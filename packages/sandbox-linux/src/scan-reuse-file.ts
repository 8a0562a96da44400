import { processAlive } from '@aalis/core';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { z } from 'zod';
import { WITNESS_LINE } from './scan-reuse.js';

/*
 * scan-reuse.ts's kept walks, written to a file so that a one-shot process (each `aalis exec`)
 * starts from the last one's walks instead of none. The soundness argument is the in-memory one,
 * unchanged: a kept walk is given again only when every directory it listed still has the device,
 * inode and ctime it had, each looked up again by lstat. What the file adds is who could have
 * written it: only this user. It lives in the data directory (no sandboxed command can write there);
 * it is opened without following a symlink, and used only when it is a regular file with one link,
 * owned by this process's user and unreadable and unwritable by anyone else, in a directory owned by
 * this user that no one else can write; its content must pass the schema below. Anything else, and
 * any error, is the same as no file: the scan walks everything, as with no reuse at all.
 *
 * The directory is opened once (O_DIRECTORY|O_NOFOLLOW), checked by that descriptor (fstat), and
 * every step after (open, temp, rename, listing, unlink) names its entry relative to that
 * descriptor (`/proc/self/fd/<fd>/<name>`: node has no openat, and the kernel resolves that link to
 * the open directory itself, not to a path looked up again). So the directory checked is the one
 * used, whatever is renamed or swapped for a symlink at its path meanwhile. Its ancestors (the
 * data directory) are this user's own and are followed as they are.
 */

/**
 * A kept walk as written: its key (a SHA-256 of the scan and the walk), what it found, and its
 * listed directories, each `dev:ino:ctimeNs:/path` (decimal; one string each, cheap to check).
 */
export interface PersistedWalk<T> {
  readonly key: string;
  readonly witnesses: readonly string[];
  readonly value: T;
}

/** The largest file read (a few hundred walks of a few hundred directories each). */
const MAX_BYTES = 8 << 20;


/** Why a file was not used (for tests and the report); `absent` is the usual first run. */
export type ReuseFileLoad<T> = { readonly kind: 'loaded'; readonly walks: PersistedWalk<T>[] } | { readonly kind: 'absent' } | { readonly kind: 'ignored'; readonly why: string };

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The path of `name` in the directory open at `fd`: resolved by the kernel through the descriptor. */
const inDir = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

/** The file's directory, open, when its owner and mode make it this user's alone to write; else why not. */
function openOwnDirectory(dir: string): { fd: number } | { why: string; absent?: true } {
  let fd: number;
  try {
    fd = openSync(dir, DIR_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { why: 'its directory is missing', absent: true };
    return { why: code === 'ELOOP' || code === 'ENOTDIR' ? 'its directory is not a directory (a symlink?)' : `its directory cannot be opened (${code})` };
  }
  const st = fstatSync(fd);
  const why = st.uid !== process.geteuid!() ? `its directory is owned by uid ${st.uid}` : (st.mode & 0o022) !== 0 ? 'its directory is writable by others' : undefined;
  if (why === undefined) return { fd };
  closeSync(fd);
  return { why };
}

/**
 * Reads the kept walks at `file`, each value checked by `value`; never throws. Returns why a file
 * that exists was not used.
 */
export function loadReuseFile<T>(file: string, value: z.ZodType<T>): ReuseFileLoad<T> {
  let fd: number | undefined;
  let dirFd: number | undefined;
  try {
    const dir = openOwnDirectory(dirname(file));
    if (!('fd' in dir)) return dir.absent ? { kind: 'absent' } : { kind: 'ignored', why: dir.why };
    dirFd = dir.fd;
    try {
      fd = openSync(inDir(dirFd, basename(file)), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return code === 'ENOENT' ? { kind: 'absent' } : { kind: 'ignored', why: code === 'ELOOP' ? 'it is a symlink' : `it cannot be opened (${code})` };
    }
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: 'ignored', why: 'it is not a regular file' };
    if (st.uid !== process.geteuid!()) return { kind: 'ignored', why: `it is owned by uid ${st.uid}` };
    if ((st.mode & 0o077) !== 0) return { kind: 'ignored', why: `its mode ${(st.mode & 0o777).toString(8)} lets others read or write it` };
    if (st.nlink !== 1) return { kind: 'ignored', why: 'it has other hard links' };
    if (st.size > MAX_BYTES) return { kind: 'ignored', why: `it is larger than ${MAX_BYTES} bytes` };
    const bytes = Buffer.alloc(st.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    let json: unknown;
    try {
      json = JSON.parse(bytes.subarray(0, read).toString('utf8'));
    } catch {
      return { kind: 'ignored', why: 'it is not JSON' };
    }
    const parsed = z
      .object({ v: z.literal(1), walks: z.array(z.object({ key: z.string().regex(/^[0-9a-f]{64}$/), witnesses: z.array(z.string().regex(WITNESS_LINE)).min(1), value })) })
      .safeParse(json);
    if (!parsed.success) return { kind: 'ignored', why: 'its content is not kept walks' };
    return { kind: 'loaded', walks: parsed.data.walks as PersistedWalk<T>[] };
  } catch (e) {
    return { kind: 'ignored', why: `it could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (dirFd !== undefined) closeSync(dirFd);
  }
}

/**
 * Replaces `file` with `walks`: a temp file made O_EXCL|O_NOFOLLOW, mode 0600, in the same
 * directory (made 0700 when missing, and used only when it is this user's alone), renamed over
 * the final name (rename replaces a symlink there, never follows it). No fsync: after a crash a
 * torn file fails the schema and is ignored. A failed write only means the next process walks again.
 */
export function storeReuseFile<T>(file: string, walks: readonly PersistedWalk<T>[]): void {
  let temp: string | undefined;
  let dirFd: number | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const dir = openOwnDirectory(dirname(file));
    if (!('fd' in dir)) return;
    dirFd = dir.fd;
    const name = basename(file);
    temp = inDir(dirFd, `${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      const data = Buffer.from(`${JSON.stringify({ v: 1, walks })}\n`, 'utf8');
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, inDir(dirFd, name));
    temp = undefined;
    dropDeadWritersTemps(dirFd, name);
  } catch {
    // the next process walks again
  } finally {
    if (temp !== undefined) {
      try {
        unlinkSync(temp);
      } catch {
        // gone already
      }
    }
    if (dirFd !== undefined) closeSync(dirFd);
  }
}


/**
 * Removes the temps of writers that died before their rename (a SIGKILLed `aalis exec`): each
 * would stay in the cache directory (open at `dirFd`) for good. Only this file's own temp names of a pid that no
 * longer runs, and only a regular file of this user (unlink never follows a symlink).
 */
function dropDeadWritersTemps(dirFd: number, file: string): void {
  const prefix = `${file}.`;
  for (const name of readdirSync(`/proc/self/fd/${dirFd}`)) {
    const m = name.startsWith(prefix) ? /^(\d+)\.[0-9a-f]{12}\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (!m || processAlive(Number(m[1]))) continue;
    const path = inDir(dirFd, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st?.isFile() && st.uid === process.geteuid!()) {
      try {
        unlinkSync(path);
      } catch {
        // gone already (another writer's sweep)
      }
    }
  }
}

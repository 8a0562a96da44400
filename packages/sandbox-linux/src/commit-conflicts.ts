import { randomBytes } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readlinkSync, readSync, type Stats, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodePath } from './host-names.js';
import { atFd, openDir } from './host-walk.js';
import { walkTree } from './dir-cursor.js';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/*
 * The host keeps changing while a command runs (the user edits, another program writes), and the
 * upper layer holds what the command saw when it first touched an entry, not what the host has at
 * the end. So the commit never replaces or removes a host entry that changed after the run
 * started: that is a conflict, the host's version stays and the command's is reported.
 *
 * "Changed" is the entry's ctime: every write, chmod, chown, rename or new link of an inode moves
 * it, and a program cannot set it back. The run's start is the ctime of a file made just before
 * the command starts, so an entry stamped in the same clock tick as the start counts as changed (a
 * false conflict keeps the host's version: the safe side). Where the ctime would say "unchanged"
 * wrongly, the start is moved earlier instead (more conflicts, never fewer):
 * - a file system that stamps coarser than the daemon's temp (ext4 with 128-byte inodes and
 *   FAT: whole seconds) or from another clock (a network file system's server): the start is
 *   stamped in every writable root too, on its own file system, and the earliest stamp is kept
 *   (not in a root on the temp's own file system: the same clock, and a stamp there would change
 *   the root's ctime, so the next run's scan could not be reused, scan-reuse.ts);
 *   a root where no stamp can be made counts from {@link COARSEST_NS} before the start;
 * - the wall clock stepped back during the run: the step is measured at the commit (the wall
 *   clock against the monotonic one, which no step moves) and taken off the start.
 */

/** A host entry the commit left alone because it changed during the run; thrown from deep in the walk, caught per entry. */
export class CommitConflict extends AalisError<LinuxErrorCode> {
  constructor(
    readonly path: string,
    /** Where the command's version was kept, if it was. */
    readonly keptAt?: string,
  ) {
    super('commit-conflict', `${path} changed on the host during the run: the command's version was not committed`);
  }
}

/** The stderr line for a conflict. */
export const conflictNote = (path: string, keptAt?: string) =>
  `aalis: ${path} changed on the host during the run: the command's version was not committed (the host's version is kept)${keptAt === undefined ? '' : `; the command's version is at ${keptAt}`}\n`;

/** The coarsest timestamps a Linux file system keeps (FAT: 2 s): the margin when a root cannot be stamped. */
export const COARSEST_NS = 2_000_000_000n;

/** The run's start, as {@link markRunStart} took it. */
export interface RunStart {
  /** The earliest stamp, in nanoseconds of the file systems' clocks. */
  readonly stamp: bigint;
  /** The wall clock minus the monotonic clock when it was taken (ns): a step back of the wall clock lowers it. */
  readonly offset: bigint;
}

/** The wall clock minus the monotonic clock, in ns (1 ms resolution): constant unless the wall clock is stepped. */
export type ClockOffset = () => bigint;
const wallMinusMonotonic: ClockOffset = () => BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/**
 * Stamps the run's start in `dir` (the run's layer folder) and in each of `roots` (the writable
 * roots, on their own file systems: a file made and removed at once) and keeps the earliest. Call
 * it before the command starts.
 */
export function markRunStart(dir: string, roots: readonly string[] = [], clock: ClockOffset = wallMinusMonotonic): RunStart {
  const offset = clock();
  const marker = join(dir, 'started');
  writeFileSync(marker, '', { mode: 0o600, flag: 'wx' });
  const mine = lstatSync(marker, { bigint: true });
  const own = mine.ctimeNs;
  let stamp = own;
  for (const root of roots) {
    // on the layers' own file system the marker above is that clock already: making a file in the
    // root too would only change the root's ctime, which makes every later scan of it walk again (scan-reuse.ts)
    if (sameFileSystem(root, mine.dev)) continue;
    const at = stampIn(root) ?? own - COARSEST_NS;
    if (at < stamp) stamp = at;
  }
  return { stamp, offset };
}

/** Whether the directory `root` is on the file system `dev` (a bind mount of it included: the same device). */
function sameFileSystem(root: string, dev: bigint): boolean {
  try {
    return statSync(encodePath(root), { bigint: true }).dev === dev;
  } catch {
    return false; // stamped in it, or the margin: as before
  }
}

/** The ctime of a file made (and removed at once) in the directory `root`, by its descriptor; undefined when it cannot be made. */
function stampIn(root: string): bigint | undefined {
  const fd = openDir(encodePath(root));
  if (fd === undefined) return undefined;
  const name = Buffer.from(`.aalis-run-start-${randomBytes(6).toString('hex')}`);
  try {
    const f = openSync(atFd(fd, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      return lstatSync(atFd(fd, name), { bigint: true }).ctimeNs;
    } finally {
      closeSync(f);
      unlinkSync(atFd(fd, name));
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The start the commit compares ctimes against: the stamp, less any step back the wall clock
 * took since (plus its 1 ms resolution), so an entry changed after such a step still counts as
 * changed. A step back and forward again between the start and the commit is not seen.
 */
export function commitSince(start: RunStart, clock: ClockOffset = wallMinusMonotonic): bigint {
  const back = start.offset - clock();
  return back > 0n ? start.stamp - back - 1_000_000n : start.stamp;
}

/** Whether the host entry `name` in the directory open at `fd` changed at or after `since`; false when it is gone. */
export function changedSince(fd: number, name: Buffer, since: bigint): boolean {
  try {
    return lstatSync(atFd(fd, name), { bigint: true }).ctimeNs >= since;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/**
 * Whether any entry of the host tree at `name` changed at or after `since`. Iterative and by
 * descriptors (any depth, never through a symlink); a directory that cannot be read counts as
 * changed (what it holds is unknown, so it is not removed).
 */
export function treeChangedSince(fd: number, name: Buffer, since: bigint): boolean {
  let changed = false;
  try {
    // one open directory at a time, back up through `..` checked by identity (dir-cursor.ts)
    const whole = walkTree(
      fd,
      name,
      '',
      () => '',
      (d, n) => (changed || changedSince(d, n, since) ? 'stop' : 'descend'),
      (d, n) => {
        const r = openDirOrChanged(atFd(d, n));
        if (r !== 'changed') return r;
        changed = true;
        return undefined;
      },
    );
    return changed || !whole;
  } catch {
    return true; // a directory that could not be listed, or moved meanwhile: what it holds is unknown
  }
}

function openDirOrChanged(path: Buffer): number | undefined | 'changed' {
  try {
    return openDir(path);
  } catch {
    return 'changed';
  }
}

const NOFOLLOW_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Whether the upper entry is what the host already has: a copy-up made by a change of times only
 * (`touch`), or a write of the same bytes. Same type, mode, owner and bytes (a symlink: the same
 * target). Such an entry is not committed at all, so a host edit made during the run is never
 * overwritten by a stale copy of itself.
 */
export function sameAsHost(upperFd: number, hostFd: number, name: Buffer, upper: Stats, host: Stats): boolean {
  if (upper.isSymbolicLink() && host.isSymbolicLink()) return readLink(upperFd, name).equals(readLink(hostFd, name));
  if (!upper.isFile() || !host.isFile()) return false;
  if ((upper.mode & 0o7777) !== (host.mode & 0o7777) || upper.uid !== host.uid || upper.gid !== host.gid || upper.size !== host.size) return false;
  return sameBytes(atFd(upperFd, name), atFd(hostFd, name));
}

function readLink(fd: number, name: Buffer): Buffer {
  // a buffer, so a target that is not UTF-8 compares exactly
  return readlinkSync(atFd(fd, name), { encoding: 'buffer' });
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  const fa = openSync(a, NOFOLLOW_READ);
  try {
    const fb = openSync(b, NOFOLLOW_READ);
    try {
      const ba = Buffer.allocUnsafe(1 << 16);
      const bb = Buffer.allocUnsafe(1 << 16);
      for (;;) {
        const na = readSync(fa, ba);
        const nb = readFully(fb, bb, na);
        if (na !== nb || !ba.subarray(0, na).equals(bb.subarray(0, nb))) return false;
        if (na === 0) return true;
      }
    } finally {
      closeSync(fb);
    }
  } finally {
    closeSync(fa);
  }
}

/** Reads up to `want` bytes (short reads joined), so two files read in step compare chunk by chunk. */
function readFully(fd: number, buf: Buffer, want: number): number {
  let got = 0;
  while (got < want) {
    const n = readSync(fd, buf, got, want - got, null);
    if (n === 0) break;
    got += n;
  }
  return got;
}

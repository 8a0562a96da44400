import { closeSync, constants, lstatSync, openSync, readlinkSync, readSync, type Stats, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
 * the command starts, from the same clock the file systems stamp with, so an entry stamped in the
 * same clock tick as the start counts as changed (a false conflict keeps the host's version: the
 * safe side).
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

/** Stamps the run's start in `dir` (the run's layer folder) and returns it, in nanoseconds. Call it before the command starts. */
export function markRunStart(dir: string): bigint {
  const marker = join(dir, 'started');
  writeFileSync(marker, '', { mode: 0o600, flag: 'wx' });
  return lstatSync(marker, { bigint: true }).ctimeNs;
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

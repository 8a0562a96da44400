import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, readSync, type Stats, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AalisError, encodePath } from '@aalis/core';
import { atFd, openDir } from './host-walk.js';
import { unescapeOctal } from './opaque-dirs.js';
import { walkTree } from './dir-cursor.js';
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
 *   stamped in every writable root and every file system mounted under one, each on its own
 *   file system, and the earliest stamp is kept (a root on the layer folder's own file system is
 *   not stamped again: the same clock, and a stamp there would change the root's ctime, so the
 *   next run's scan could not be reused, scan-reuse.ts); a root where no stamp can be made counts from
 *   {@link COARSEST_NS} before the start, and so does an entry on a device no stamp was made on
 *   (a mount that could not be stamped, or one mounted during the run);
 * - the wall clock stepped back during the run: the largest step seen (clock-steps.ts samples
 *   the wall clock against the monotonic one, which no step moves, while the run is open) is
 *   taken off the start.
 */

/** A host entry the commit left alone because it changed during the run; thrown from deep in the walk, caught per entry. */
export class CommitConflict extends AalisError<LinuxErrorCode> {
  constructor(
    readonly path: string,
    /** Where the command's version was kept, if it was. */
    readonly keptAt?: string,
    /** What the host did: changed the entry, or removed (or renamed) one the command had changed. */
    readonly host: HostSide = 'changed',
  ) {
    super('commit-conflict', `${path} ${HOST_SIDE_TEXT[host]} on the host during the run: the command's version was not committed`);
  }
}

/** What the host did to an entry during the run that the command also changed. */
export type HostSide = 'changed' | 'gone';

const HOST_SIDE_TEXT: Record<HostSide, string> = { changed: 'changed', gone: 'was removed or renamed' };

/** The stderr line for a conflict. */
export const conflictNote = (path: string, keptAt?: string, host: HostSide = 'changed') =>
  `aalis: ${path} ${HOST_SIDE_TEXT[host]} on the host during the run: the command's version was not committed (${host === 'changed' ? "the host's version is kept" : 'it is not put back'})${keptAt === undefined ? '' : `; the command's version is at ${keptAt}`}\n`;

/** Whether the directory open at `fd` changed (its entries or its mode: the ctime) at or after `since`. */
export function dirChangedSince(fd: number, since: Since): boolean {
  const st = fstatSync(fd, { bigint: true });
  return st.ctimeNs >= (since.devs.includes(st.dev) ? since.ns : since.ns - COARSEST_NS);
}

/** The coarsest timestamps a Linux file system keeps (FAT: 2 s): the margin when a root cannot be stamped. */
export const COARSEST_NS = 2_000_000_000n;

/** The run's start, as {@link markRunStart} took it. */
export interface RunStart {
  /** The earliest stamp, in nanoseconds of the file systems' clocks. */
  readonly stamp: bigint;
  /** The devices a stamp was made on (the writable roots', the file systems mounted under them): an entry elsewhere counts from {@link COARSEST_NS} before. */
  readonly devs: readonly bigint[];
}

/** What the commit compares a host entry's ctime against (crosses to the host thread). */
export interface Since {
  /** An entry on one of `devs` changed when its ctime is at or after this (ns). */
  readonly ns: bigint;
  /** The devices stamped at the start; an entry on another one changed when its ctime is at or after `ns` less {@link COARSEST_NS}. */
  readonly devs: readonly bigint[];
}

/**
 * Stamps the run's start in `dir` (the run's layer folder), in each of `roots` (the writable
 * roots) and in every file system mounted under one of them (from `mountinfo`, the text of
 * /proc/self/mountinfo), each on its own file system (a file made and removed at once), and keeps
 * the earliest. Call it before the command starts.
 */
export function markRunStart(dir: string, roots: readonly string[] = [], mountinfo: Buffer = readMountinfo()): RunStart {
  const marker = join(dir, 'started');
  writeFileSync(marker, '', { mode: 0o600, flag: 'wx' });
  const mine = lstatSync(marker, { bigint: true });
  const own = mine.ctimeNs;
  let stamp = own;
  const devs = new Set<bigint>();
  for (const root of roots) {
    // on the layers' own file system the marker above is that clock already: making a file in the
    // root too would only change the root's ctime, which makes every later scan of it walk again (scan-reuse.ts)
    if (devOf(encodePath(root)) === mine.dev) {
      devs.add(mine.dev);
      continue;
    }
    const at = stampIn(encodePath(root));
    if (at === undefined) {
      // the margin is in the start itself: the root's entries need no second one
      stamp = stamp < own - COARSEST_NS ? stamp : own - COARSEST_NS;
      const dev = devOf(encodePath(root));
      if (dev !== undefined) devs.add(dev);
    } else {
      if (at.ns < stamp) stamp = at.ns;
      for (const d of at.devs) devs.add(d);
    }
  }
  // a file system mounted under a root stamps with its own granularity and clock; one that cannot be stamped is not in `devs`
  for (const point of mountsUnder(roots, mountinfo)) {
    const at = stampIn(point);
    if (at === undefined) continue;
    if (at.ns < stamp) stamp = at.ns;
    for (const d of at.devs) devs.add(d);
  }
  return { stamp, devs: [...devs] };
}

function devOf(path: Buffer): bigint | undefined {
  try {
    return lstatSync(path, { bigint: true }).dev;
  } catch {
    return undefined;
  }
}

/** The text of /proc/self/mountinfo; empty when there is none (no mount is then found). */
export function readMountinfo(): Buffer {
  try {
    return readFileSync('/proc/self/mountinfo');
  } catch {
    return Buffer.alloc(0); // no mount table: every entry off the roots' devices counts from the coarsest tick before
  }
}

/** The mount points (bytes) strictly under one of `roots`, from the text of /proc/self/mountinfo. */
export function mountsUnder(roots: readonly string[], mountinfo: Buffer): Buffer[] {
  const under = roots.map((r) => Buffer.concat([encodePath(r), Buffer.from(r === '/' ? '' : '/')]));
  return mountPointsOf(mountinfo).filter((point) => under.some((u) => point.length > u.length && point.subarray(0, u.length).equals(u)));
}

/** Every mount point (bytes, unescaped) of the text of /proc/self/mountinfo. */
function mountPointsOf(mountinfo: Buffer): Buffer[] {
  const points: Buffer[] = [];
  let from = 0;
  while (from < mountinfo.length) {
    let end = mountinfo.indexOf(0x0a, from);
    if (end < 0) end = mountinfo.length;
    const raw = fifthField(mountinfo, from, end);
    from = end + 1;
    if (raw !== undefined) points.push(unescapeOctal(raw));
  }
  return points;
}

/**
 * The mount point (bytes) at or under the host entry `name` of the directory open at `dirFd`, from
 * the text of /proc/self/mountinfo; undefined when there is none. A removal the command made is
 * not carried through one: overlayfs shows the command the directory under a mount, never what is
 * mounted there, and a file system the host mounted there during the run (a bind of another
 * folder, a FUSE mount) had its files deleted by the commit of an `rm -rf` the command ran before
 * (found by an attack).
 */
export function mountAtOrUnder(dirFd: number, name: Buffer, mountinfo: Buffer): Buffer | undefined {
  let dir: Buffer;
  try {
    dir = readlinkSync(`/proc/self/fd/${dirFd}`, { encoding: 'buffer' });
  } catch {
    return undefined;
  }
  const at = Buffer.concat([dir, Buffer.from(dir.length === 1 ? '' : '/'), name]);
  return mountPointsOf(mountinfo).find((point) => point.equals(at) || (point.length > at.length && point[at.length] === 0x2f && point.subarray(0, at.length).equals(at)));
}

/** The mount point field (the fifth, space-separated) of the line `buf[from, end)`. */
function fifthField(buf: Buffer, from: number, end: number): Buffer | undefined {
  let start = from;
  for (let i = 0; i < 4; i++) {
    const sp = buf.indexOf(0x20, start);
    if (sp < 0 || sp >= end) return undefined;
    start = sp + 1;
  }
  const sp = buf.indexOf(0x20, start);
  return buf.subarray(start, sp < 0 || sp > end ? end : sp);
}

/**
 * The ctime of a file made (and removed at once) in the directory at `path`, by its descriptor
 * (`O_EXCL|O_NOFOLLOW`), with the devices it speaks for (the directory's and the file's: on an
 * overlayfs they may differ); undefined when it cannot be made (read-only, full, gone).
 */
function stampIn(path: Buffer): { ns: bigint; devs: bigint[] } | undefined {
  let fd: number | undefined;
  try {
    fd = openDir(path);
    if (fd === undefined) return undefined;
    const name = Buffer.from(`.aalis-run-start-${randomBytes(6).toString('hex')}`);
    const f = openSync(atFd(fd, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      const st = lstatSync(atFd(fd, name), { bigint: true });
      return { ns: st.ctimeNs, devs: [st.dev, fstatSync(fd, { bigint: true }).dev] };
    } finally {
      closeSync(f);
      unlinkSync(atFd(fd, name));
    }
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The start the commit compares ctimes against: the stamp, less the largest step back the wall
 * clock took since (plus its 1 ms resolution; clock-steps.ts samples it during the run), so an
 * entry changed after such a step still counts as changed.
 */
export function commitSince(start: RunStart, stepBack: bigint): Since {
  return { ns: stepBack > 0n ? start.stamp - stepBack - 1_000_000n : start.stamp, devs: start.devs };
}

/** Whether the host entry `name` in the directory open at `fd` changed at or after `since`; false when it is gone. */
export function changedSince(fd: number, name: Buffer, since: Since): boolean {
  try {
    const st = lstatSync(atFd(fd, name), { bigint: true });
    return st.ctimeNs >= (since.devs.includes(st.dev) ? since.ns : since.ns - COARSEST_NS);
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
export function treeChangedSince(fd: number, name: Buffer, since: Since): boolean {
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

import { lstatSync } from 'node:fs';
import type { DirStamp } from './host-walk.js';
import { encodePath } from '@aalis/core';
import type { PersistedWalk } from './scan-reuse-file.js';
import { StampedDevices } from './stamped-file-system.js';

/*
 * Each walk of the pattern half of a scan (scan.ts's findPatternMatches: the workspace, the home
 * to a few levels, each ancestor) depends only on the names and types in the directories it
 * listed, the policy, the cwd and the placeholders skipped. A directory's
 * device, inode and ctime change whenever an entry in it is added, removed, renamed or replaced
 * (a file swapped for a symlink, a directory for a file) and whenever its mode changes; a mount
 * over it changes the device and inode its path leads to. So a scan whose every listed directory
 * still has the stamp it had is the same walk, and its matches are given again after one lstat per
 * directory instead of an open, fstat, close (and a listing and a match per entry for the rest).
 * Kept per walk, so a busy directory (a shared temp among the ancestors, a home a shell writes its
 * history in) makes only its own walk run again. A walk that depended on anything else (a matching symlink's target, a directory it could not
 * list, another run's placeholder, the tree index) is never kept. What is not kept here is looked
 * at on every run: the kinds of the named paths and the host's sockets (scan.ts).
 */

/** How long before its listing a directory must have last changed for its ctime to show every later change (the kernel stamps ctimes with a coarse clock). */
export const REUSE_SETTLED_MS = 2000;

/** Walks kept, each of one scan (a policy, cwd and set of options; about ten walks a scan). */
const KEPT = 128;

/** A witness as {@link ScanReuse.persisted} writes it: device, inode, ctime (ns) and the absolute path. */
export const WITNESS_LINE = /^(\d{1,20}):(\d{1,20}):(\d{1,20}):(\/.*)$/s;

/** One directory a scan listed, as it was. */
interface Witness {
  readonly path: string;
  readonly stamp: DirStamp;
}

interface Kept<T> {
  readonly witnesses: readonly Witness[];
  readonly value: T;
}

/**
 * Collects the directories one walk listed; {@link ScanWitness.spoil} when the walk depended on
 * something their stamps do not cover, or a directory was not settled when it was listed.
 */
export class ScanWitness {
  readonly dirs: Witness[] = [];
  private spoiled = false;
  private readonly stamped = new StampedDevices();

  constructor(private readonly settledNs: bigint) {}

  /** Walker's `listed` hook (host-walk.ts). */
  readonly listed = (path: string, stamp: DirStamp, at: bigint): void => {
    // changed within the clock's tick before the listing: a change after it might keep the same ctime
    if (stamp.ctimeNs >= at - this.settledNs) this.spoiled = true;
    if (!this.spoiled && !this.stamped.has(stamp.dev, encodePath(path))) this.spoiled = true; // its stamp need not change when an entry does (stamped-file-system.ts)
    this.dirs.push({ path, stamp: { dev: stamp.dev, ino: stamp.ino, ctimeNs: stamp.ctimeNs } });
  };

  /** The walk depended on something a directory's stamp does not show: it is not kept. */
  spoil(): void {
    this.spoiled = true;
  }

  /** Whether the walk may be kept. */
  get sound(): boolean {
    return !this.spoiled;
  }
}

/** Whether every directory still has the stamp it had (looked up by path: a mount or a swap anywhere on the way shows as another device or inode). */
function unchanged(witnesses: readonly Witness[]): boolean {
  const stamped = new StampedDevices();
  for (const w of witnesses) {
    let st: DirStamp | undefined;
    try {
      st = lstatSync(encodePath(w.path), { bigint: true, throwIfNoEntry: false });
    } catch {
      return false; // unreachable now (EACCES, ENAMETOOLONG): scan again, which says why
    }
    if (!st || st.ino !== w.stamp.ino || st.dev !== w.stamp.dev || st.ctimeNs !== w.stamp.ctimeNs) return false;
    if (!stamped.has(st.dev, encodePath(w.path))) return false; // now on a file system whose stamps do not tell (a device number given again)
  }
  return true;
}

let reused = 0;
const reusedAt = new Map<string, number>();

/** Walks given again from {@link ScanReuse} on this thread (for tests and the benchmark); with `root`, those of the walks from it. */
export function reusedScanCount(root?: string): number {
  return root === undefined ? reused : (reusedAt.get(root) ?? 0);
}

/** Kept walks of this thread, by key (the policy, cwd, options and skipped placeholders as JSON, and the walk). */
export class ScanReuse<T> {
  private readonly kept = new Map<string, Kept<T>>();
  private changed = false;

  /** Whether a walk was kept or dropped since the last {@link ScanReuse.persisted}. */
  get dirty(): boolean {
    return this.changed;
  }

  /** The kept walks of `keys` (all without), least recently used first, as written to a file (scan-reuse-file.ts). */
  persisted(keys?: ReadonlySet<string>): PersistedWalk<T>[] {
    this.changed = false;
    return [...this.kept].filter(([key]) => keys === undefined || keys.has(key)).map(([key, k]) => ({
      key,
      witnesses: k.witnesses.map((w) => `${w.stamp.dev}:${w.stamp.ino}:${w.stamp.ctimeNs}:${w.path}`),
      value: k.value,
    }));
  }

  /** Takes walks read from a file, in their order; each is checked at {@link ScanReuse.get} like any other. */
  adopt(walks: readonly PersistedWalk<T>[]): void {
    for (const w of walks) {
      if (this.kept.size >= KEPT) break;
      if (this.kept.has(w.key)) continue;
      const witnesses: Witness[] = [];
      for (const x of w.witnesses) {
        const m = WITNESS_LINE.exec(x);
        if (!m) return; // not what persisted() writes: nothing more from this file
        witnesses.push({ path: m[4]!, stamp: { dev: BigInt(m[1]!), ino: BigInt(m[2]!), ctimeNs: BigInt(m[3]!) } });
      }
      this.kept.set(w.key, { witnesses, value: w.value });
    }
  }

  /** The kept value for `key` (a walk from `root`) if every directory it listed is unchanged; otherwise it is dropped. */
  get(key: string, root: string): T | undefined {
    const k = this.kept.get(key);
    if (!k) return undefined;
    this.kept.delete(key);
    if (!unchanged(k.witnesses)) {
      this.changed = true;
      return undefined;
    }
    this.kept.set(key, k); // most recently used last
    reused += 1;
    reusedAt.set(root, (reusedAt.get(root) ?? 0) + 1);
    return k.value;
  }

  /** Keeps `value` for `key` when its walk's witness is sound. */
  set(key: string, witness: ScanWitness, value: T): void {
    if (!witness.sound || witness.dirs.length === 0) return;
    this.changed = true;
    this.kept.delete(key);
    if (this.kept.size >= KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, { witnesses: witness.dirs, value });
  }

  /** Forgets every kept scan. */
  clear(): void {
    this.changed = this.kept.size > 0;
    this.kept.clear();
  }
}

import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';
import { randomUUID } from 'node:crypto';
import type { KeptCommit, KeptWrites, SandboxPolicy } from '@aalis/api-reach';
import type { RunOverlays } from './overlay-run.js';
import type { RunDir } from './run-dir.js';
import type { OverlayRoot } from './overlay-mount.js';
import type { CommitReport } from './upper-commit.js';
import type { Since } from './commit-conflicts.js';

/*
 * The read-only-first flow without a second run: the refused writes of a run stay in its upper
 * layers (the run's private folder, mode 0700, out of every sandbox's sight: daemon-tmp.ts) until
 * the caller has asked for them. An approval commits exactly those entries from the kept layers,
 * through the same judged commit (upper-commit.ts, with the approved paths as its `only` set and
 * the run's start stamp, so a host entry changed since is a conflict); a rejection, the bounded
 * wait running out, or the sandbox closing removes them.
 */

/** How long refused writes are kept for an answer by default: an ask times out well before. */
export const DEFAULT_KEPT_WRITES_MS = 10 * 60_000;

/** What committing one root of kept layers needs: the host thread's commit with an `only` set. */
export type KeptCommitRun = (job: { overlay: OverlayRoot; policy: SandboxPolicy; only: readonly string[]; mountPoints: readonly string[]; since?: Since }) => Promise<CommitReport>;

interface Kept {
  readonly overlays: RunOverlays;
  readonly dir: RunDir;
  readonly paths: ReadonlySet<string>;
  readonly mountPoints: readonly string[];
  readonly timer: NodeJS.Timeout;
}

/** Kept writes refer to layers that are gone (timed out, discarded, committed) or never were. */
export class KeptWritesGoneError extends AalisError<LinuxErrorCode> {
  constructor(readonly id: string) {
    super('kept-writes-gone', `the kept writes ${id} are gone (committed, discarded or timed out): nothing was committed`, { fix: 'run the command again' });
  }
}

/** The runs whose refused writes wait for an answer. */
export class KeptWritesStore {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly ttlMs = DEFAULT_KEPT_WRITES_MS) {}

  /** Keeps a run's layers and returns what to hand back; `paths` are the run's refused entries. */
  keep(overlays: RunOverlays, dir: RunDir, paths: readonly string[], mountPoints: readonly string[]): KeptWrites {
    const id = randomUUID();
    dir.keepLayers();
    const timer = setTimeout(() => this.discard(id), this.ttlMs);
    timer.unref(); // a kept layer never holds the daemon open
    this.kept.set(id, { overlays, dir, paths: new Set(paths), mountPoints, timer });
    overlays.keepWatching(); // a step of the clock while the ask waits is seen by the later commit
    return { id, paths: [...paths] };
  }

  /** How many runs' writes are kept now. */
  get size(): number {
    return this.kept.size;
  }

  /**
   * Commits `paths` (those not among the kept ones are refused as never kept) under `policy`,
   * then removes the layers whatever happened: nothing kept is committed twice.
   */
  async commit(id: string, policy: SandboxPolicy, paths: readonly string[], run: KeptCommitRun): Promise<KeptCommit> {
    const k = this.kept.get(id);
    if (k === undefined) throw new KeptWritesGoneError(id);
    this.kept.delete(id);
    clearTimeout(k.timer);
    const only = paths.filter((p) => k.paths.has(p));
    const never = paths.filter((p) => !k.paths.has(p));
    try {
      const since = k.overlays.since;
      const r = await k.overlays.commit((overlay) => run({ overlay, policy, only, mountPoints: k.mountPoints, ...(since === undefined ? {} : { since }) }));
      const refused = [...r.refused, ...never];
      const notes = r.notes + (never.length > 0 ? `aalis: ${never.join(', ')} ${never.length === 1 ? 'was' : 'were'} not among the kept writes of that run: not committed\n` : '');
      return { committed: r.committed.filter((p) => only.includes(p)), refused, conflicts: r.conflicts.map((c) => c.path), notes };
    } finally {
      k.dir.releaseLayers();
    }
  }

  /** Removes one run's kept layers; an unknown id is nothing to do. */
  discard(id: string): void {
    const k = this.kept.get(id);
    if (k === undefined) return;
    this.kept.delete(id);
    clearTimeout(k.timer);
    k.overlays.stopWatching();
    k.dir.releaseLayers();
  }

  /** Removes every kept layer (the sandbox is closing). */
  discardAll(): void {
    for (const id of [...this.kept.keys()]) this.discard(id);
  }
}

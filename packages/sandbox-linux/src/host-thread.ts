import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { HostLane, type HostLaneRole } from './host-lane.js';
import type { SandboxPolicy } from '@aalis/api-reach';
import { keptDirectories } from './host-walk.js';
import { treeIndex } from './tree-index.js';
import { memoDirectories, reusedSubtreeCount } from './tree-memo.js';
import { type HostFacts, type ScanOptions, scanHost } from './scan.js';
import { type OverlayRoot, removeLayers } from './overlay-mount.js';
import type { Since } from './commit-conflicts.js';
import { type UndoReport, undoNewForbidden } from './landing-sweeper.js';
import { type CommitReport, commitUpper } from './upper-commit.js';
import { type CommitBatch, type CommitBatchReport, commitBatch } from './commit-batch.js';
import { pathsIdentity } from './prepared.js';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/** One walk of the host, as a message to the host thread. */
export type HostJob =
  | { readonly op: 'scan'; readonly policy: SandboxPolicy; readonly cwd: string; readonly options?: ScanOptions; readonly skip: readonly string[] }
  | {
      readonly op: 'look';
      readonly policy: SandboxPolicy;
      readonly before: HostFacts;
      readonly options?: ScanOptions;
      readonly keep: readonly string[];
      readonly aside?: string;
    }
  // the overlay's commit after a run (upper-commit.ts): as long as what the command wrote is large
  | { readonly op: 'commit'; readonly policy: SandboxPolicy; readonly overlay: OverlayRoot; readonly mountPoints: readonly string[]; readonly since?: Since; readonly only?: readonly string[]; readonly aside?: string }
  // every upper layer of a run after it ended, in one job (commit-batch.ts)
  | ({ readonly op: 'commitAll' } & CommitBatch)
  // a run's overlay layers after its commit: removing them waits on the kernel for tens of ms (overlay-mount.ts)
  | { readonly op: 'removeLayers'; readonly dir: string }
  // what the paths a prepared sandbox's start looked up are now (prepared.ts), after the scan of its release
  | { readonly op: 'identity'; readonly paths: readonly string[] }
  | { readonly op: 'memory' };

/** What the host model holds in memory: the heap of the thread it runs on, after a full collection, and the directories whose listings it keeps. */
export interface HostMemory {
  readonly heapUsed: number;
  readonly keptDirectories: number;
  /** Directories whose scan results are remembered (tree-memo.ts). */
  readonly memoDirectories: number;
  /** Trees the index (tree-index.ts) watches and trusts; 0 where there is none. */
  readonly indexedTrees: number;
  /** Subtrees the scans did not walk, their remembered results replayed (a count since the thread started). */
  readonly reusedSubtrees: number;
}

/** What each job answers. */
export type HostAnswer<J extends HostJob> = J extends { op: 'scan' }
  ? HostFacts
  : J extends { op: 'memory' }
    ? HostMemory
    : J extends { op: 'commit' }
      ? CommitReport
      : J extends { op: 'commitAll' }
        ? CommitBatchReport
        : J extends { op: 'removeLayers' }
          ? undefined
          : J extends { op: 'identity' }
            ? string
            : UndoReport;

/** An error the host thread threw, rebuilt on this side with its name and message. */
export class HostWalkError extends AalisError {
  constructor(
    override readonly name: string,
    message: string,
    code?: string,
  ) {
    super(code ?? ('host-walk' satisfies LinuxErrorCode), message);
  }
}

/** The same job, on the calling thread: what the host thread does, and the fallback when it cannot start. */
export function runHostJob(job: HostJob): HostFacts | UndoReport | CommitReport | CommitBatchReport | HostMemory | string | undefined {
  if (job.op === 'memory') return hostMemory();
  if (job.op === 'identity') return pathsIdentity(job.paths);
  if (job.op === 'removeLayers') {
    removeLayers(job.dir);
    return undefined;
  }
  if (job.op === 'commitAll') return commitBatch(job);
  if (job.op === 'commit') return commitUpper(job.policy, job.overlay, new Set(job.mountPoints), job.since, job.only === undefined ? undefined : new Set(job.only), job.aside);
  return job.op === 'scan'
    ? scanHost(job.policy, job.cwd, job.options, new Set(job.skip))
    : undoNewForbidden(job.policy, job.before, job.options, new Set(job.keep), job.aside);
}

/** {@link HostMemory} of this thread. A full collection first, so the number is what is kept, not garbage. */
export function hostMemory(): HostMemory {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return {
    heapUsed: getHeapStatistics().used_heap_size,
    keptDirectories: keptDirectories(),
    memoDirectories: memoDirectories(),
    indexedTrees: treeIndex()?.readyTrees ?? 0,
    reusedSubtrees: reusedSubtreeCount(),
  };
}

/** Where the host walks run: on a worker thread (a daemon), or on the calling thread (a one-shot process). */
export type HostWalks = 'thread' | 'inline';

/**
 * Which lane a job runs on (host-lane.ts): only the removal of layers needs no order with the walks.
 * A prepared sandbox's identity goes with the walks, not behind a removal of layers (tens of ms).
 * (The sync after a commit is on no lane: each run's is its own child, committed-sync.ts.)
 */
function laneOf(job: HostJob): HostLaneRole {
  return job.op === 'removeLayers' ? 'chores' : 'walks';
}

/**
 * The scan before a run and the looks for landings walk trees of up to millions of entries; done
 * on the daemon's thread they would stop it answering (a 1M-file workspace: seconds). They run on
 * one worker thread per sandbox service instead, one job at a time in order (so the commits of two
 * runs in one workspace never interleave). The removal of a run's layers, which waits on the
 * kernel for tens of ms and needs no order, runs on a second worker, so the next call's scan does
 * not queue behind it. If a worker cannot start or dies, its jobs run on the calling thread: slower
 * for the daemon, never skipped.
 */
export class HostThread {
  private readonly lanes: Record<HostLaneRole, HostLane> = { walks: new HostLane('walks'), chores: new HostLane('chores') };

  /**
   * `inline` runs every job on the calling thread and never starts a worker: for a one-shot
   * process (`aalis exec`) with nothing else to answer, which would only pay the threads' start-up
   * (loading the sandbox's modules a second time).
   */
  constructor(where: HostWalks = 'thread') {
    if (where === 'inline') for (const lane of Object.values(this.lanes)) void lane.close();
  }

  /** Whether a lane's worker is running (for tests and `doctor`). */
  started(role: HostLaneRole): boolean {
    return this.lanes[role].started;
  }

  /** Runs one job on its host thread. */
  run<J extends HostJob>(job: J): Promise<HostAnswer<J>> {
    const posted = this.lanes[laneOf(job)].post(job);
    if (!posted) return Promise.resolve().then(() => runHostJob(job) as HostAnswer<J>);
    return posted.then(
      (v) => v as HostAnswer<J>,
      (e: { name: string; message: string; code?: string }) => {
        throw new HostWalkError(e.name, e.message, e.code);
      },
    );
  }

  /** Stops the workers (jobs in flight fail). */
  async close(): Promise<void> {
    await Promise.all(Object.values(this.lanes).map((lane) => lane.close()));
  }
}

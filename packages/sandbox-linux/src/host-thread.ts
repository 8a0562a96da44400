import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import type { SandboxPolicy } from '@aalis/api-reach';
import { keptDirectories } from './host-walk.js';
import { treeIndex } from './tree-index.js';
import { memoDirectories, reusedSubtreeCount } from './tree-memo.js';
import { type HostFacts, type ScanOptions, scanHost } from './scan.js';
import { type OverlayRoot, removeLayers } from './overlay-mount.js';
import { type UndoReport, undoNewForbidden } from './landing-sweeper.js';
import { type CommitReport, commitUpper } from './upper-commit.js';
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
  | { readonly op: 'commit'; readonly policy: SandboxPolicy; readonly overlay: OverlayRoot; readonly mountPoints: readonly string[]; readonly since?: bigint; readonly only?: readonly string[]; readonly aside?: string }
  // a run's overlay layers after its commit: removing them waits on the kernel for tens of ms (overlay-mount.ts)
  | { readonly op: 'removeLayers'; readonly dir: string }
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
      : J extends { op: 'removeLayers' }
        ? undefined
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
export function runHostJob(job: HostJob): HostFacts | UndoReport | CommitReport | HostMemory | undefined {
  if (job.op === 'memory') return hostMemory();
  if (job.op === 'removeLayers') {
    removeLayers(job.dir);
    return undefined;
  }
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

/** The worker's entry: built JavaScript beside this file, or (in the checkout's tests) the TypeScript through tsx. */
function startWorker(): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./host-thread.worker.js', here));
  // the ESM entry of tsx's API (require.resolve would give the CommonJS one)
  const pkg = createRequire(here).resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(pkg, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  const tsx = pathToFileURL(join(dirname(pkg), api)).href;
  const entry = new URL('./host-thread.worker.ts', here).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`, { eval: true });
}

/** Where the host walks run: on a worker thread (a daemon), or on the calling thread (a one-shot process). */
export type HostWalks = 'thread' | 'inline';

/**
 * The scan before a run and the looks for landings walk trees of up to millions of entries; done
 * on the daemon's thread they would stop it answering (a 1M-file workspace: seconds). They run on
 * one worker thread per sandbox service instead, one job at a time in order. If the worker cannot
 * start or dies, the job runs on the calling thread: slower for the daemon, never skipped.
 */
export class HostThread {
  private worker?: Worker;
  private failed: boolean;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  /**
   * `inline` runs every job on the calling thread and never starts the worker: for a one-shot
   * process (`aalis exec`) with nothing else to answer, which would only pay the thread's start-up
   * (loading the sandbox's modules a second time).
   */
  constructor(where: HostWalks = 'thread') {
    this.failed = where === 'inline';
  }

  /** Runs one job on the host thread. */
  run<J extends HostJob>(job: J): Promise<HostAnswer<J>> {
    const worker = this.ensure();
    if (!worker) return Promise.resolve().then(() => runHostJob(job) as HostAnswer<J>);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, job });
    });
  }

  private ensure(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    let worker: Worker;
    try {
      worker = startWorker();
    } catch {
      this.failed = true;
      return undefined;
    }
    worker.unref();
    worker.on('message', (msg: { id: number; value?: unknown; error?: { name: string; message: string; code?: string } }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.error) p.reject(new HostWalkError(msg.error.name, msg.error.message, msg.error.code));
      else p.resolve(msg.value);
    });
    const die = (e: Error) => {
      // every job in flight fails (their callers fail closed); later ones run on the calling thread
      this.failed = true;
      this.worker = undefined;
      for (const p of this.pending.values()) p.reject(new HostWalkError('HostWalkError', `the host walk thread stopped: ${e.message}`));
      this.pending.clear();
    };
    worker.on('error', die);
    worker.on('exit', (code) => die(new Error(`exit ${code}`)));
    this.worker = worker;
    return worker;
  }

  /** Stops the worker (jobs in flight fail). */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failed = true;
    await w?.terminate();
  }
}

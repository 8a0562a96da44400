/*
 * The host walks of a sandbox, off the daemon's event loop (see host-thread.ts): the scan before
 * a run, the looks for landings during and after it, and the overlay's commit after it. One
 * message in, one answer out. This
 * thread keeps the tree index (tree-index.ts): it is brought up to now before every walk.
 */
import { parentPort } from 'node:worker_threads';
import { type HostJob, runHostJob } from './host-thread.js';
import type { HostFacts } from './scan.js';
import { INDEX_MIN_ENTRIES, startTreeIndex } from './tree-index.js';

const index = startTreeIndex();
let queue: Promise<unknown> = Promise.resolve();
/** Entries the last scan from each cwd counted: the index is worth a sync only for large trees. */
const lastVisited = new Map<string, number>();

/** Whether a job's walk is large enough for the index (see INDEX_MIN_ENTRIES). */
function large(job: HostJob): boolean {
  if (job.op === 'memory' || job.op === 'commit' || job.op === 'removeLayers') return false;
  const min = job.options?.indexMinEntries ?? INDEX_MIN_ENTRIES;
  return job.op === 'scan' ? (lastVisited.get(job.cwd) ?? 0) >= min : job.before.visited >= min;
}

parentPort?.on('message', (msg: { id: number; job: HostJob }) => {
  const { id, job } = msg;
  // one job at a time, in order: the index's generation is the one this walk started at
  queue = queue.then(async () => {
    try {
      if (large(job) || job.op === 'memory') await index?.sync();
      else index?.forget(); // a small walk: read it all, without waiting on the helper
      const value = runHostJob(job);
      if (job.op === 'scan') lastVisited.set(job.cwd, (value as HostFacts).visited);
      parentPort?.postMessage({ id, value });
    } catch (e) {
      const err = e as Error & { code?: string };
      parentPort?.postMessage({ id, error: { name: err.name, message: err.message, code: err.code } });
    }
  });
});

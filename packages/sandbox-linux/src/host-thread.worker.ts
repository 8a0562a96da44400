/*
 * The host walks of a sandbox, off the daemon's event loop (see host-thread.ts): the scan before
 * a run and the looks for landings during and after it. One message in, one answer out. This
 * thread keeps the tree index (tree-index.ts): it is brought up to now before every walk.
 */
import { parentPort } from 'node:worker_threads';
import { type HostJob, runHostJob } from './host-thread.js';
import { startTreeIndex } from './tree-index.js';

const index = startTreeIndex();
let queue: Promise<unknown> = Promise.resolve();

parentPort?.on('message', (msg: { id: number; job: HostJob }) => {
  const { id, job } = msg;
  // one job at a time, in order: the index's generation is the one this walk started at
  queue = queue.then(async () => {
    try {
      await index?.sync();
      const value = runHostJob(job);
      parentPort?.postMessage({ id, value });
    } catch (e) {
      const err = e as Error & { code?: string };
      parentPort?.postMessage({ id, error: { name: err.name, message: err.message, code: err.code } });
    }
  });
});

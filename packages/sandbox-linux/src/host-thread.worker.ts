/*
 * The host walks of a sandbox, off the daemon's event loop (see host-thread.ts): the scan before
 * a run and the looks for landings during and after it. One message in, one answer out.
 */
import { parentPort } from 'node:worker_threads';
import { type HostJob, runHostJob } from './host-thread.js';

parentPort?.on('message', (msg: { id: number; job: HostJob }) => {
  const { id, job } = msg;
  try {
    const value = runHostJob(job);
    parentPort?.postMessage({ id, value });
  } catch (e) {
    const err = e as Error & { code?: string };
    parentPort?.postMessage({ id, error: { name: err.name, message: err.message, code: err.code } });
  }
});

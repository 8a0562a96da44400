/*
 * The host walks of a sandbox, off the daemon's event loop (see host-thread.ts): the scan before
 * a run and the looks for landings during and after it. One message in, one answer out.
 */
import { parentPort } from 'node:worker_threads';
import type { HostJob } from './host-thread.js';
import { scanHost } from './scan.js';
import { undoNewForbidden } from './undo-new.js';

parentPort?.on('message', (msg: { id: number; job: HostJob }) => {
  const { id, job } = msg;
  try {
    const value =
      job.op === 'scan'
        ? scanHost(job.policy, job.cwd, job.options, new Set(job.skip))
        : undoNewForbidden(job.policy, job.before, job.options, new Set(job.keep), job.aside);
    parentPort?.postMessage({ id, value });
  } catch (e) {
    const err = e as Error & { code?: string };
    parentPort?.postMessage({ id, error: { name: err.name, message: err.message, code: err.code } });
  }
});

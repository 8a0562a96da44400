import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * What a host worker thread is for. `walks`: the scans, looks and commits, one at a time in order,
 * with the tree index (the commit of two runs in one workspace never interleaves, and a scan sees
 * every commit asked before it). `chores`: work that needs no order with the walks and only waits on
 * the kernel (removing a run's overlay layers), so one call's tear-down never holds up another's scan.
 */
export type HostLaneRole = 'walks' | 'chores';

/** An error the worker reported: its name, message and code, rebuilt by the caller. */
export interface LaneError {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
}

/** The worker's entry: built JavaScript beside this file, or (in the checkout's tests) the TypeScript through tsx. */
function startWorker(role: HostLaneRole): Worker {
  const here = import.meta.url;
  const workerData = { role };
  if (!here.endsWith('.ts')) return new Worker(new URL('./host-thread.worker.js', here), { workerData });
  // the ESM entry of tsx's API (require.resolve would give the CommonJS one)
  const pkg = createRequire(here).resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(pkg, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default;
  const tsx = pathToFileURL(join(dirname(pkg), api)).href;
  const entry = new URL('./host-thread.worker.ts', here).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`, { eval: true, workerData });
}

/**
 * One worker thread and the jobs in flight on it. The worker is started at the first job; it
 * holds the process open only while a job is in flight. `undefined` from {@link HostLane.post}
 * means there is no worker (it could not start, died, or the lane was closed): the caller runs
 * the job on its own thread instead.
 */
export class HostLane {
  private worker?: Worker;
  private failed = false;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: LaneError) => void }>();

  constructor(private readonly role: HostLaneRole) {}

  /** Whether the lane's worker is running. */
  get started(): boolean {
    return this.worker !== undefined;
  }

  /** Posts one job; its answer, or a rejection with the worker's {@link LaneError}. */
  post(job: unknown): Promise<unknown> | undefined {
    const worker = this.ensure();
    if (!worker) return undefined;
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, job });
    });
  }

  private ensure(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    let worker: Worker;
    try {
      worker = startWorker(this.role);
    } catch {
      this.failed = true;
      return undefined;
    }
    worker.unref();
    worker.on('message', (msg: { id: number; value?: unknown; error?: LaneError }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.error) p.reject(msg.error);
      else p.resolve(msg.value);
    });
    const die = (e: Error) => {
      // every job in flight fails (their callers fail closed); later ones run on the calling thread
      this.failed = true;
      this.worker = undefined;
      for (const p of this.pending.values()) p.reject({ name: 'HostWalkError', message: `the host walk thread stopped: ${e.message}` });
      this.pending.clear();
    };
    worker.on('error', die);
    worker.on('exit', (code) => die(new Error(`exit ${code}`)));
    this.worker = worker;
    return worker;
  }

  /** Stops the worker (jobs in flight fail); later jobs run on the calling thread. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failed = true;
    await w?.terminate();
  }
}

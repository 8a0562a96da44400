/*
 * The host walks of a sandbox, off the daemon's event loop (see host-thread.ts): the scan before
 * a run, the looks for landings during and after it, and the overlay's commit after it. One
 * message in, one answer out. The `walks` thread keeps the tree index (tree-index.ts): it is
 * brought up to now before every walk. The `chores` thread (host-lane.ts) runs the jobs that need
 * no order with the walks, in the order they come, without the index.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SandboxPolicy } from '@aalis/api-reach';
import type { HostLaneRole } from './host-lane.js';
import { type HostJob, runHostJob } from './host-thread.js';
import type { HostFacts } from './scan.js';
import { INDEX_MIN_ENTRIES, startTreeIndex } from './tree-index.js';
import { HOST_WORKER_NICE, niceThisThread } from './thread-priority.js';

// before anything runs here (the tree index's watcher, forked from this thread, inherits it too)
niceThisThread(HOST_WORKER_NICE);

const role = (workerData as { role?: HostLaneRole } | undefined)?.role ?? 'walks';
const index = role === 'walks' ? startTreeIndex() : undefined;
let queue: Promise<unknown> = Promise.resolve();
/** Entries the last scan from each cwd counted: the index is worth a sync only for large trees. */
const lastVisited = new Map<string, number>();

/**
 * Each message brings a fresh copy of its policy, and the rules of a policy are compiled once per
 * policy object (policy-evaluator.ts): the same policy by content is given the same object, so
 * the scan, looks and commit of a run, and the runs of a conversation, compile it once. A policy
 * is plain JSON (SandboxPolicySchema), so equal text is an equal policy.
 */
const policies = new Map<string, SandboxPolicy>();
const KEPT_POLICIES = 32;
function interned(policy: SandboxPolicy): SandboxPolicy {
  const key = JSON.stringify(policy);
  const known = policies.get(key);
  if (known) {
    policies.delete(key); // most recently used last
    policies.set(key, known);
    return known;
  }
  policies.set(key, policy);
  if (policies.size > KEPT_POLICIES) policies.delete(policies.keys().next().value!);
  return policy;
}

/** Whether a job's walk is large enough for the index (see INDEX_MIN_ENTRIES). */
function large(job: HostJob): boolean {
  if (job.op === 'memory' || job.op === 'commit' || job.op === 'commitAll' || job.op === 'removeLayers' || job.op === 'identity') return false;
  const min = job.options?.indexMinEntries ?? INDEX_MIN_ENTRIES;
  return job.op === 'scan' ? (lastVisited.get(job.cwd) ?? 0) >= min : job.before.visited >= min;
}

parentPort?.on('message', (msg: { id: number; job: HostJob }) => {
  const { id } = msg;
  const job = 'policy' in msg.job ? { ...msg.job, policy: interned(msg.job.policy) } : msg.job;
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

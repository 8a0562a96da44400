import { rm } from 'node:fs/promises';
import { realPathOf } from '@aalis/plugin-reach';
import { PodError } from './errors.js';
import { within } from './sandbox-root.js';
import { FINAL_STATES, type TaskRecord } from './task.js';

/** What a clean-up did. */
export interface CleanReport {
  readonly cleaned: readonly string[];
  readonly skipped: readonly { readonly id: string; readonly why: string }[];
}

/** What a clean-up reads and updates: the pod's task list and the workspaces it must never touch. */
export interface CleanupDeps {
  readonly tasks: () => Iterable<TaskRecord>;
  readonly task: (id: string) => TaskRecord;
  readonly workspacesOf: (session: string) => readonly string[];
  /** Called once a task's directory is gone (its log goes with it). */
  readonly removed: (task: TaskRecord) => void;
  readonly save: () => Promise<void>;
}

/**
 * Removes one task's directory, judged where it really is: only that directory, under the root it
 * was made in, never a workspace. A directory moved or swapped for a link since is left alone.
 */
export async function removeTaskDir(task: TaskRecord, deps: CleanupDeps): Promise<void> {
  const real = await realPathOf(task.dirs.base);
  if (real !== task.dirs.base || !within(real, task.root) || real === task.root) throw new PodError('bad-sandbox-root', `task '${task.id}''s directory ${task.dirs.base} moved (now ${real}); it was not removed.`);
  if (deps.workspacesOf(task.session).some((w) => within(w, real) || within(real, w))) throw new PodError('root-in-workspace', `task '${task.id}''s directory overlaps a workspace; it was not removed.`);
  await rm(real, { recursive: true, force: true });
  task.cleanedAt = Date.now();
  deps.removed(task);
}

/** Removes the directory of one ended task, or of every ended task; running ones are skipped (or, named alone, refused). */
export async function cleanTasks(target: { id: string } | { all: true }, deps: CleanupDeps): Promise<CleanReport> {
  const tasks = 'id' in target ? [deps.task(target.id)] : [...deps.tasks()];
  const cleaned: string[] = [];
  const skipped: { id: string; why: string }[] = [];
  for (const task of tasks) {
    if (!FINAL_STATES.has(task.state)) {
      if ('id' in target) throw new PodError('still-running', `task '${task.id}' is ${task.state}; cancel it first.`);
      skipped.push({ id: task.id, why: task.state });
      continue;
    }
    if (task.cleanedAt !== undefined) {
      if ('id' in target) skipped.push({ id: task.id, why: 'already cleaned' });
      continue;
    }
    await removeTaskDir(task, deps);
    cleaned.push(task.id);
  }
  await deps.save();
  return { cleaned, skipped };
}

/** Removes the directories of ended tasks that finished before `limit` (ms since the epoch). */
export async function expireTasks(limit: number, deps: CleanupDeps): Promise<CleanReport> {
  const cleaned: string[] = [];
  for (const task of deps.tasks()) {
    if (!FINAL_STATES.has(task.state) || task.cleanedAt !== undefined) continue;
    if ((task.finishedAt ?? task.createdAt) > limit) continue;
    await removeTaskDir(task, deps);
    cleaned.push(task.id);
  }
  if (cleaned.length > 0) await deps.save();
  return { cleaned, skipped: [] };
}

import { closeSync, lstatSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { atFd, DirMovedError, MountInTreeError, removeTreeAt } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { PodError } from './errors.js';
import { within } from './sandbox-root.js';
import { FINAL_STATES, type TaskRecord } from './task.js';
import { identityOf, openRealDir } from './task-dir-fd.js';

/** What a clean-up did: the tasks cleaned, those skipped (running, already cleaned) and those whose removal failed. */
export interface CleanReport {
  readonly cleaned: readonly string[];
  readonly skipped: readonly { readonly id: string; readonly why: string }[];
  /** Tasks whose directory could not be removed (why); the others were still cleaned. */
  readonly failed: readonly { readonly id: string; readonly why: string }[];
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
 * was made in, never a workspace. Removal goes by descriptor (core's `removeTreeAt`): no symlink
 * in the tree or on the way to it is followed, so a directory swapped for a link mid-walk (by the
 * task's code, or by another user with a hand on the root) is unlinked, never entered. A directory
 * moved, swapped or replaced since it was made (its device and inode differ) is left alone.
 */
export async function removeTaskDir(task: TaskRecord, deps: CleanupDeps): Promise<void> {
  const base = task.dirs.base;
  const real = await realPathOf(base);
  if (real !== base || !within(real, task.root) || real === task.root) throw new PodError('bad-sandbox-root', `task '${task.id}''s directory ${base} moved (now ${real}); it was not removed.`, 'Check what is there and remove it by hand if it is yours.');
  if (deps.workspacesOf(task.session).some((w) => within(w, real) || within(real, w))) throw new PodError('root-in-workspace', `task '${task.id}''s directory overlaps a workspace; it was not removed.`);
  const parent = openRealDir(dirname(base));
  if (parent === undefined) throw new PodError('bad-sandbox-root', `the directory holding task '${task.id}' (${dirname(base)}) is gone or was swapped for a link; nothing was removed.`, 'Check the sandbox root and remove the task directory by hand if it is yours.');
  try {
    const expected = task.dirs.id;
    const name = Buffer.from(basename(base));
    // already gone (removed by hand): nothing to remove, and the task is clean
    const present = lstatOrGone(atFd(parent, name));
    if (expected !== undefined && present) {
      const own = openRealDir(base);
      if (own === undefined) throw new PodError('bad-sandbox-root', `task '${task.id}''s directory ${base} is gone or was swapped for a link; nothing was removed.`, 'Check what is there and remove it by hand if it is yours.');
      const id = identityOf(own);
      closeSync(own);
      if (id.dev !== expected.dev || id.ino !== expected.ino) {
        throw new PodError('bad-sandbox-root', `task '${task.id}''s directory ${base} is not the one the pod made (it was replaced); nothing was removed.`, 'Someone with write access to the sandbox root replaced it: check the root, and remove the directory by hand if it is yours.');
      }
    }
    if (present) removeTreeAt(parent, name);
  } catch (error) {
    if (error instanceof PodError) throw error;
    if (error instanceof DirMovedError || error instanceof MountInTreeError) {
      throw new PodError('clean-failed', `task '${task.id}''s directory changed while it was removed (${error.message}); the removal stopped and nothing outside it was touched.`, 'Run the clean again; if it keeps failing, check the directory by hand.');
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    throw new PodError('clean-failed', `task '${task.id}''s directory could not be fully removed (${code}: ${(error as Error).message}).`, 'Check the permissions in the directory and run the clean again.');
  } finally {
    closeSync(parent);
  }
  task.cleanedAt = Date.now();
  deps.removed(task);
}

/** Whether anything is at `path` (not followed); false only when nothing is. */
function lstatOrGone(path: Buffer): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Why a removal failed, in a line. */
const whyOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Removes the directory of one ended task, or of every ended task; running ones are skipped (or,
 * named alone, refused). With `--all` a task whose removal fails is reported in `failed` and the
 * others are still cleaned.
 */
export async function cleanTasks(target: { id: string } | { all: true }, deps: CleanupDeps): Promise<CleanReport> {
  const tasks = 'id' in target ? [deps.task(target.id)] : [...deps.tasks()];
  const cleaned: string[] = [];
  const skipped: { id: string; why: string }[] = [];
  const failed: { id: string; why: string }[] = [];
  try {
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
      try {
        await removeTaskDir(task, deps);
        cleaned.push(task.id);
      } catch (error) {
        if ('id' in target) throw error;
        failed.push({ id: task.id, why: whyOf(error) });
      }
    }
  } finally {
    // what was removed stays recorded as removed, even when a named task's removal then failed
    if (cleaned.length > 0 || !('id' in target)) await deps.save();
  }
  return { cleaned, skipped, failed };
}

/** Removes the directories of ended tasks that finished before `limit` (ms since the epoch); one that fails is reported and the others go on. */
export async function expireTasks(limit: number, deps: CleanupDeps): Promise<CleanReport> {
  const cleaned: string[] = [];
  const failed: { id: string; why: string }[] = [];
  for (const task of deps.tasks()) {
    if (!FINAL_STATES.has(task.state) || task.cleanedAt !== undefined) continue;
    if ((task.finishedAt ?? task.createdAt) > limit) continue;
    try {
      await removeTaskDir(task, deps);
      cleaned.push(task.id);
    } catch (error) {
      failed.push({ id: task.id, why: whyOf(error) });
    }
  }
  if (cleaned.length > 0) await deps.save();
  return { cleaned, skipped: [], failed };
}

import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { realPathOf } from '@aalis/plugin-reach';
import { PodError } from './errors.js';
import { within } from './sandbox-root.js';
import type { TaskFile, TaskRecord } from './task.js';

/** The most entries a listing returns; a task that made more is cut off, not a reason to stall. */
const MAX_FILES_LISTED = 5_000;

/** The start of one of a task's files, as text. */
export interface TaskFileRead {
  readonly path: string;
  readonly content: string;
  readonly truncated: boolean;
  readonly binary: boolean;
}

/** The files a task made in its working directory, depth first, by name; links are listed, never followed. */
export async function listTaskFiles(task: TaskRecord): Promise<TaskFile[]> {
  if (task.cleanedAt !== undefined) return [];
  const out: TaskFile[] = [];
  const visit = async (dir: string) => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_FILES_LISTED) return;
      const p = join(dir, entry.name);
      const info = await lstat(p).catch(() => undefined);
      if (!info) continue;
      const kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : 'file';
      out.push({ path: relative(task.dirs.work, p), kind, size: info.size, modifiedAt: Math.round(info.mtimeMs) });
      if (kind === 'dir') await visit(p);
    }
  };
  await visit(task.dirs.work);
  return out;
}

/**
 * The start of one of a task's files (the panel's preview, file returns). Judged on its real
 * path: a link the task planted that leads out of its directory is refused, not followed.
 */
export async function readTaskFile(task: TaskRecord, path: string, maxBytes = 64 * 1024): Promise<TaskFileRead> {
  const real = await realPathOf(path, task.dirs.work);
  if (!within(real, task.dirs.work) || real === task.dirs.work) throw new PodError('bad-input', `'${path}' is not a file in the task's directory.`);
  // O_NONBLOCK: a FIFO the task left there must not hang the daemon.
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => {
    throw new PodError('not-found', `'${path}' does not exist in the task's directory.`);
  });
  try {
    if (!(await handle.stat()).isFile()) throw new PodError('bad-input', `'${path}' is not a regular file.`);
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, Math.min(bytesRead, maxBytes));
    return { path: relative(task.dirs.work, real), content: bytes.toString('utf8'), truncated: bytesRead > maxBytes, binary: bytes.includes(0) };
  } finally {
    await handle.close();
  }
}

import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import { shownBytes, utf8NameOf } from '@aalis/core';
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

/**
 * The files a task made in its working directory, depth first, by name; links are listed, never
 * followed. Names are read as bytes: an entry whose path is not UTF-8 is listed with `notUtf8`
 * (its bytes as `\xNN`) rather than skipped, so a person sees that it is there.
 */
export async function listTaskFiles(task: TaskRecord): Promise<TaskFile[]> {
  if (task.cleanedAt !== undefined) return [];
  const out: TaskFile[] = [];
  const root = Buffer.from(task.dirs.work);
  const visit = async (dir: Buffer, rel: Buffer | undefined) => {
    const names = await readdir(dir, { encoding: 'buffer' }).catch(() => [] as Buffer[]);
    for (const name of names.sort(Buffer.compare)) {
      if (out.length >= MAX_FILES_LISTED) return;
      const path = Buffer.concat([dir, SLASH, name]);
      const info = await lstat(path).catch(() => undefined);
      if (!info) continue;
      const kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : 'file';
      const relBytes = rel ? Buffer.concat([rel, SLASH, name]) : name;
      const text = utf8NameOf(relBytes);
      const entry = { path: text ?? relBytes.toString('utf8'), kind, size: info.size, modifiedAt: Math.round(info.mtimeMs) } as const;
      out.push(text === undefined ? { ...entry, notUtf8: shownBytes(relBytes) } : entry);
      if (kind === 'dir') await visit(path, relBytes);
    }
  };
  await visit(root, undefined);
  return out;
}

const SLASH = Buffer.from('/');

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

import { closeSync, lstatSync } from 'node:fs';
import { relative } from 'node:path';
import { atFd, namesIn, openDirNoFollow, openForRead, SafeFileError, shownBytes, utf8NameOf } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { PodError } from './errors.js';
import { within } from './sandbox-root.js';
import type { TaskFile, TaskRecord } from './task.js';
import { openRealDir } from './task-dir-fd.js';

/** The most entries a listing returns; a task that made more is cut off, not a reason to stall. */
const MAX_FILES_LISTED = 5_000;

/** The start of one of a task's files, as text. */
export interface TaskFileRead {
  readonly path: string;
  readonly content: string;
  readonly truncated: boolean;
  readonly binary: boolean;
}

/** How deep a listing goes: one open descriptor a level, so a task's code cannot exhaust them. */
const MAX_DEPTH = 128;

/**
 * The files a task made in its working directory, depth first, by name; links are listed, never
 * followed. Walked by descriptor (each directory opened from its parent with O_NOFOLLOW), so a
 * path longer than PATH_MAX is listed like any other and a directory swapped for a link is a
 * link. A directory whose contents could not be read, or that lies deeper than {@link MAX_DEPTH},
 * carries `unlisted` (why): never silently dropped. Names are read as bytes: an entry whose path
 * is not UTF-8 is listed with `notUtf8` (its bytes as `\xNN`) rather than skipped.
 */
export async function listTaskFiles(task: TaskRecord): Promise<TaskFile[]> {
  if (task.cleanedAt !== undefined) return [];
  const out: TaskFile[] = [];
  const top = openRealDir(task.dirs.work);
  if (top === undefined) return [];
  const visit = (fd: number, rel: Buffer | undefined, depth: number) => {
    for (const name of namesIn(fd).sort(Buffer.compare)) {
      if (out.length >= MAX_FILES_LISTED) return;
      const at = atFd(fd, name);
      let info: ReturnType<typeof lstatSync>;
      try {
        info = lstatSync(at);
      } catch {
        continue; // gone since the directory was read
      }
      const kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : 'file';
      const relBytes = rel ? Buffer.concat([rel, SLASH, name]) : name;
      const text = utf8NameOf(relBytes);
      const entry: TaskFile = { path: text ?? relBytes.toString('utf8'), kind, size: info.size, modifiedAt: Math.round(info.mtimeMs), ...(text === undefined ? { notUtf8: shownBytes(relBytes) } : {}) };
      if (kind !== 'dir') {
        out.push(entry);
        continue;
      }
      if (depth >= MAX_DEPTH) {
        out.push({ ...entry, unlisted: `deeper than ${MAX_DEPTH} levels` });
        continue;
      }
      let child: number | undefined;
      try {
        child = openDirNoFollow(at);
      } catch (error) {
        out.push({ ...entry, unlisted: (error as NodeJS.ErrnoException).code ?? 'unreadable' });
        continue;
      }
      if (child === undefined) {
        out.push({ ...entry, unlisted: 'changed while listed' });
        continue;
      }
      const index = out.push(entry) - 1;
      try {
        visit(child, relBytes, depth + 1);
      } catch (error) {
        out[index] = { ...entry, unlisted: (error as NodeJS.ErrnoException).code ?? 'unreadable' };
      } finally {
        closeSync(child);
      }
    }
  };
  try {
    visit(top, undefined, 0);
  } finally {
    closeSync(top);
  }
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
  // core's openForRead: O_NOFOLLOW and a check that what was opened is at `real`, so a symlink
  // the task's code swaps in after the check above is refused, never followed (found by an
  // attack: a root-only file read through the panel's preview); O_NONBLOCK, so a FIFO never hangs
  const handle = await openForRead(real).catch((error: unknown) => {
    if (error instanceof SafeFileError && error.code === 'missing') throw new PodError('not-found', `'${path}' does not exist in the task's directory.`);
    if (error instanceof SafeFileError) throw new PodError('bad-input', `'${path}' was refused: ${error.message}`, 'Read a regular file the task made; a link is never followed.');
    throw error;
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

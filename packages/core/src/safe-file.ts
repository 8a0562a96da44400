import { randomBytes } from 'node:crypto';
import { constants, type Dirent, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, rename, rmdir, unlink } from 'node:fs/promises';
import { bytesOf, checkedPath, DirAnchor, HAS_PROC_FD, refusalOf, type SafePath, segmentsOf, shownPath, splitPath, verifyOpened } from './dir-anchor.js';
import { kernelFileSystemOf } from './kernel-file-system.js';
import { SafeFileError } from './safe-file-error.js';

/** Where a temp file's name was recorded before it was made, so a later start can remove it. */
export interface TempRecorder {
  /** Records a temp file (its judged path) durably, before it exists. */
  record(temp: Buffer): Promise<void>;
  /** Says the temp file is gone (renamed into place or removed). */
  done(temp: Buffer): void;
}

/** Options of the writing operations. */
export interface WriteOptions {
  /** Mode of a new file (default 0o644, less the umask); a replaced file keeps its own. */
  readonly mode?: number;
  /** Make missing parent directories, each one checked before it is made (default false). */
  readonly createParents?: boolean;
  /** Mode of directories made (default 0o755, less the umask). */
  readonly dirMode?: number;
  /** Records temp files so a start after a crash removes them ({@link TempJournal}). */
  readonly journal?: TempRecorder;
}

/** Every temp file of the layer ends so: `.<name>.<12 hex>.aalis-tmp`, in the target's own directory. */
export const TEMP_SUFFIX = '.aalis-tmp';
const TEMP_NAME = /\.[0-9a-f]{12}\.aalis-(?:tmp|write)$/;

/** Whether a name is a temp file of this layer (or of the writers it replaced). */
export function isTempName(name: SafePath): boolean {
  return TEMP_NAME.test(bytesOf(name).toString('latin1'));
}

function tempNameFor(name: Buffer): Buffer {
  // NAME_MAX is 255 bytes: keep enough of the name to recognise it, never more.
  const stem = name.subarray(0, 200);
  return Buffer.concat([Buffer.from('.'), stem, Buffer.from(`.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`)]);
}

async function lstatOrUndefined(path: Buffer): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Opens the directory at `dir` (judged), making the missing ones first when asked. Nothing is
 * made before its parent was opened and verified, so a symlink anywhere on the way is refused
 * before a directory appears. Returns the anchor and the directories it made, shallowest first.
 */
async function anchorDir(dir: Buffer, create: boolean, mode: number): Promise<{ anchor: DirAnchor; created: Buffer[] }> {
  if (!create) return { anchor: await DirAnchor.open(dir), created: [] };
  const segments = dir.length === 1 ? [] : segmentsOf(dir);
  let depth = segments.length;
  // The deepest name that exists (as anything: a symlink there is refused when opened).
  while (depth > 0) {
    const prefix = dir.subarray(0, segments.slice(0, depth).reduce((n, s) => n + 1 + s.length, 0));
    try {
      await lstat(prefix);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw refusalOf(error, prefix, 'looking up a parent');
      depth--;
    }
  }
  const base = depth === 0 ? Buffer.from('/') : dir.subarray(0, segments.slice(0, depth).reduce((n, s) => n + 1 + s.length, 0));
  let anchor = await DirAnchor.open(base);
  const created: Buffer[] = [];
  try {
    for (const name of segments.slice(depth)) {
      try {
        await mkdir(anchor.entry(name), { mode });
        created.push(anchor.judged(name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw refusalOf(error, anchor.judged(name), 'making a directory');
      }
      const next = await anchor.child(name);
      await anchor.sync();
      await anchor.close();
      anchor = next;
    }
  } catch (error) {
    await anchor.close();
    throw error;
  }
  return { anchor, created };
}

/**
 * Makes the directory `path` and its missing parents, one at a time, each inside a parent that
 * was opened without following symlinks and verified to be at its judged path. Returns the
 * directories it made, shallowest first (an undo removes them deepest first).
 */
export async function makeDirs(path: SafePath, options: { readonly mode?: number } = {}): Promise<string[]> {
  const { anchor, created } = await anchorDir(checkedPath(path), true, options.mode ?? 0o755);
  await anchor.close();
  return created.map((c) => c.toString('utf8'));
}

/**
 * Replaces the file at `path` atomically: a temp file made `O_EXCL|O_NOFOLLOW` in the same
 * (verified) directory, `fill`ed, fsynced, renamed onto the final name, and the directory fsynced.
 * A symlink at the final name is refused; a hard-linked target is replaced, so its other names
 * keep the old content. After a crash the target is the old or the new file, never a mix.
 */
async function replaceFile(path: SafePath, fill: (handle: FileHandle) => Promise<void>, options: WriteOptions): Promise<void> {
  const bytes = checkedPath(path);
  const { parent, name } = splitPath(bytes);
  if (name.length === 0) throw new SafeFileError('bad-path', shownPath(path), 'the root is not a file.');
  const { anchor } = await anchorDir(parent, options.createParents === true, options.dirMode ?? 0o755);
  try {
    const current = await lstatOrUndefined(anchor.entry(name));
    if (current?.isSymbolicLink()) {
      throw new SafeFileError('final-symlink', shownPath(path), 'a symlink sits at the final name; it was not followed and nothing was written.', 'Remove the symlink, or name the place it points to (it is judged there).');
    }
    if (current !== undefined && !current.isFile()) throw new SafeFileError('not-a-file', shownPath(path), 'something other than a regular file sits at that name; nothing was written.');
    const temp = tempNameFor(name);
    const judgedTemp = anchor.judged(temp);
    await options.journal?.record(judgedTemp);
    const handle = await open(anchor.entry(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, options.mode ?? 0o644);
    let placed = false;
    try {
      await verifyOpened(handle, judgedTemp);
      if (current !== undefined && options.mode === undefined) await handle.chmod(current.mode & 0o777);
      await fill(handle);
      await handle.sync();
      await handle.close();
      await rename(anchor.entry(temp), anchor.entry(name));
      placed = true;
      await anchor.sync();
    } finally {
      if (!placed) {
        await handle.close().catch(() => {});
        await unlink(anchor.entry(temp)).catch(() => {});
      }
      options.journal?.done(judgedTemp);
    }
  } catch (error) {
    throw refusalOf(error, bytes, 'writing the file');
  } finally {
    await anchor.close();
  }
}

async function writeAll(handle: FileHandle, data: Uint8Array): Promise<void> {
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await handle.write(data, written, data.length - written);
    written += bytesWritten;
  }
}

/** Replaces the file at the judged `path` with `data`, atomically and without following a symlink (see {@link WriteOptions}). */
export async function writeFileAtomic(path: SafePath, data: string | Uint8Array, options: WriteOptions = {}): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  await replaceFile(path, (handle) => writeAll(handle, bytes), options);
}

/**
 * Opens a regular file for reading without following a symlink at its name, and verifies that
 * what was opened is at `path` (a symlinked parent is refused). Non-blocking: a FIFO never hangs.
 */
export async function openForRead(path: SafePath): Promise<FileHandle> {
  const bytes = checkedPath(path);
  let handle: FileHandle;
  try {
    handle = await open(bytes, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SafeFileError('missing', shownPath(path), 'there is no file at that name.');
    throw refusalOf(error, bytes, 'opening the file');
  }
  return verifiedFile(handle, bytes, path);
}

/** Opens a file for appending (made when missing), without following a symlink, in a verified directory. */
export async function openForAppend(path: SafePath, options: Pick<WriteOptions, 'mode' | 'createParents' | 'dirMode'> = {}): Promise<FileHandle> {
  const bytes = checkedPath(path);
  const { parent, name } = splitPath(bytes);
  const { anchor } = await anchorDir(parent, options.createParents === true, options.dirMode ?? 0o755);
  try {
    const handle = await open(anchor.entry(name), constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, options.mode ?? 0o644);
    return await verifiedFile(handle, bytes, path);
  } catch (error) {
    throw refusalOf(error, bytes, 'opening the file to append');
  } finally {
    await anchor.close();
  }
}

/**
 * Lists a directory without following a symlink at its name, verified to be the one at `path` (a
 * symlinked or swapped parent is refused), and never one on a kernel file system
 * (kernel-file-system.ts): procfs mounted anywhere lists the host's processes and the daemon's
 * descriptors and memory maps (found by an attack). Entries as `readdir` gives them, names as bytes.
 */
export async function listDirNoFollow(path: SafePath): Promise<Dirent<Buffer>[]> {
  const bytes = checkedPath(path);
  let handle: FileHandle;
  try {
    handle = await open(bytes, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SafeFileError('missing', shownPath(path), 'there is nothing at that name.');
    if (code === 'ELOOP' || (code === 'ENOTDIR' && (await lstat(bytes).catch(() => undefined))?.isSymbolicLink())) throw new SafeFileError('final-symlink', shownPath(path), 'it is a symlink; name the directory it points to (it is judged there).');
    if (code === 'ENOTDIR') throw new SafeFileError('not-a-directory', shownPath(path), 'it is not a directory.');
    throw refusalOf(error, bytes, 'opening the directory');
  }
  try {
    await verifyOpened(handle, bytes);
    const kernel = await kernelFileSystemOf(handle);
    if (kernel !== undefined) {
      throw new SafeFileError('kernel-file-system', shownPath(path), `it is on ${kernel}, which listed by the daemon is its own process and the host's kernel, not a directory of yours.`, 'List it from a command instead: the sandbox has a /proc of its own.');
    }
    // through the descriptor where there is one: what is listed is what was verified
    return await readdir(HAS_PROC_FD ? `/proc/self/fd/${handle.fd}` : bytes, { withFileTypes: true, encoding: 'buffer' });
  } finally {
    await handle.close();
  }
}

/** Reads a whole regular file without following a symlink (see {@link openForRead}); more than `maxBytes` is refused. */
export async function readFileNoFollow(path: SafePath, maxBytes = 64 * 1024 * 1024): Promise<Buffer> {
  const handle = await openForRead(path);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw new SafeFileError('io', shownPath(path), `it is ${size} bytes, more than the ${maxBytes} allowed here.`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** A regular file already opened and judged (a walk's, tree-walk.ts `openWalkedFile`), with the name a refusal shows; the caller closes it. */
export interface OpenedSource {
  readonly handle: FileHandle;
  readonly shown: string;
}

/**
 * Copies the regular file `source` onto `target` atomically, neither followed through a symlink.
 * `source` is a judged path, or a file already opened ({@link OpenedSource}). Returns the bytes
 * copied; more than `maxBytes` is refused and leaves the target as it was.
 */
export async function copyFileAtomic(source: SafePath | OpenedSource, target: SafePath, options: WriteOptions & { readonly maxBytes?: number } = {}): Promise<number> {
  const opened = typeof source === 'object' && !Buffer.isBuffer(source);
  const input = opened ? source.handle : await openForRead(source);
  const shown = opened ? source.shown : shownPath(source);
  let total = 0;
  try {
    const mode = options.mode ?? ((await input.stat()).mode & 0o777);
    await replaceFile(
      target,
      async (output) => {
        const buffer = Buffer.alloc(1024 * 1024);
        for (;;) {
          const { bytesRead } = await input.read(buffer, 0, buffer.length, total);
          if (bytesRead === 0) return;
          total += bytesRead;
          if (options.maxBytes !== undefined && total > options.maxBytes) {
            throw new SafeFileError('io', shown, `it holds more than the ${options.maxBytes} bytes allowed; nothing was written.`);
          }
          await writeAll(output, buffer.subarray(0, bytesRead));
        }
      },
      { ...options, mode },
    );
  } finally {
    if (!opened) await input.close();
  }
  return total;
}

/** Options of {@link renameNoFollow}. */
export interface RenameOptions {
  /** Replace an existing file or empty directory at `to` (default true). A symlink there is always refused. */
  readonly replace?: boolean;
  /** Make `to`'s missing parents, each checked first (default false). */
  readonly createParents?: boolean;
}

/**
 * Renames `from` to `to` inside verified parents. Neither final name is followed: a symlink at
 * `from` moves as a symlink. Without `replace` an existing `to` is refused (checked just before
 * the rename: Node has no `renameat2(RENAME_NOREPLACE)`, so a name made in between is replaced).
 */
export async function renameNoFollow(from: SafePath, to: SafePath, options: RenameOptions = {}): Promise<void> {
  const source = checkedPath(from);
  const target = checkedPath(to);
  const s = splitPath(source);
  const t = splitPath(target);
  if (s.name.length === 0 || t.name.length === 0) throw new SafeFileError('bad-path', shownPath(from), 'the root cannot be renamed.');
  const fromDir = await DirAnchor.open(s.parent);
  let toDir: DirAnchor | undefined;
  try {
    toDir = (await anchorDir(t.parent, options.createParents === true, 0o755)).anchor;
    if ((await lstatOrUndefined(fromDir.entry(s.name))) === undefined) throw new SafeFileError('missing', shownPath(from), 'there is nothing at that name to move.');
    const existing = await lstatOrUndefined(toDir.entry(t.name));
    if (existing?.isSymbolicLink()) throw new SafeFileError('final-symlink', shownPath(to), 'a symlink sits at the target name; nothing was moved.', 'Remove the symlink first.');
    if (existing !== undefined && options.replace === false) throw new SafeFileError('exists', shownPath(to), 'something exists at the target name; nothing was moved.');
    await rename(fromDir.entry(s.name), toDir.entry(t.name));
    await toDir.sync();
    await fromDir.sync();
  } catch (error) {
    throw refusalOf(error, source, `moving it to ${shownPath(to)}`);
  } finally {
    await fromDir.close();
    await toDir?.close();
  }
}

/**
 * Moves the entry at `path` (a file, a directory or a symlink, never followed) into the
 * directory `intoDir` (made when missing), under its own name or `name`, with `~N` added when
 * that is taken. Returns the new path, as bytes when `path` was given as bytes. For taking away
 * what a run left without deleting it.
 */
export async function moveAside(path: SafePath, intoDir: SafePath, name?: SafePath): Promise<SafePath> {
  const dir = checkedPath(intoDir);
  await makeDirs(dir, { mode: 0o700 });
  const base = name === undefined ? splitPath(checkedPath(path)).name : bytesOf(name);
  for (let n = 0; n < 1000; n++) {
    const candidate = Buffer.concat([dir, Buffer.from('/'), base, Buffer.from(n === 0 ? '' : `~${n}`)]);
    try {
      await renameNoFollow(path, candidate, { replace: false });
      return typeof path === 'string' ? candidate.toString('utf8') : candidate;
    } catch (error) {
      if (!(error instanceof SafeFileError) || (error.code !== 'exists' && error.code !== 'final-symlink')) throw error;
    }
  }
  throw new SafeFileError('exists', shownPath(path), `no free name in ${shownPath(intoDir)} to move it to.`);
}

/** The verified parent, or undefined when it does not exist (nothing to remove there). */
async function anchorUnlessMissing(parent: Buffer): Promise<DirAnchor | undefined> {
  try {
    return await DirAnchor.open(parent);
  } catch (error) {
    if (error instanceof SafeFileError && error.code === 'missing-parent') return undefined;
    throw error;
  }
}

/** Removes a file or symlink (never followed, never a directory) in a verified parent. Returns false when nothing was there. */
export async function removeFile(path: SafePath): Promise<boolean> {
  const bytes = checkedPath(path);
  const { parent, name } = splitPath(bytes);
  const anchor = await anchorUnlessMissing(parent);
  if (anchor === undefined) return false;
  try {
    const current = await lstatOrUndefined(anchor.entry(name));
    if (current === undefined) return false;
    if (current.isDirectory()) throw new SafeFileError('not-a-file', shownPath(path), 'it is a directory; it was not removed.');
    await unlink(anchor.entry(name));
    await anchor.sync();
    return true;
  } catch (error) {
    throw refusalOf(error, bytes, 'removing the file');
  } finally {
    await anchor.close();
  }
}

/** Removes an empty directory (never followed) in a verified parent. Returns false when it was missing or not empty. */
export async function removeEmptyDir(path: SafePath): Promise<boolean> {
  const bytes = checkedPath(path);
  const { parent, name } = splitPath(bytes);
  const anchor = await anchorUnlessMissing(parent);
  if (anchor === undefined) return false;
  try {
    await rmdir(anchor.entry(name));
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') return false;
    throw refusalOf(error, bytes, 'removing the directory');
  } finally {
    await anchor.close();
  }
}

/**
 * Removes the temp files of this layer a crash left in `dir` (not below it): regular files
 * whose name {@link isTempName} says is ours. Returns what it removed.
 */
export async function cleanStaleTemps(dir: SafePath): Promise<string[]> {
  const anchor = await DirAnchor.open(checkedPath(dir));
  const removed: string[] = [];
  try {
    for (const name of await readdir(anchor.entry(Buffer.alloc(0)), { encoding: 'buffer' })) {
      if (!isTempName(name)) continue;
      const info = await lstatOrUndefined(anchor.entry(name));
      if (!info?.isFile()) continue;
      await unlink(anchor.entry(name)).catch(() => {});
      removed.push(anchor.judged(name).toString('utf8'));
    }
    if (removed.length > 0) await anchor.sync();
  } finally {
    await anchor.close();
  }
  return removed;
}

/** `handle` if it is the judged path and a regular file; otherwise closed, and the refusal thrown. */
async function verifiedFile(handle: FileHandle, bytes: Buffer, path: SafePath): Promise<FileHandle> {
  try {
    await verifyOpened(handle, bytes);
    if (!(await handle.stat()).isFile()) throw new SafeFileError('not-a-file', shownPath(path), 'it is not a regular file.');
    // by what it is on, wherever that is mounted (kernel-file-system.ts)
    const kernel = await kernelFileSystemOf(handle);
    if (kernel !== undefined) {
      throw new SafeFileError('kernel-file-system', shownPath(path), `it is on ${kernel}, which read by the daemon is its own process and the host's kernel, not a file of yours.`, 'Read it from a command instead: the sandbox has a /proc of its own.');
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

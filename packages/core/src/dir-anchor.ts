import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { kernelFileSystemOfFd } from './kernel-file-system.js';
import { SafeFileError } from './safe-file-error.js';

/** A path the safe file layer takes: a string, or raw bytes for names that are not UTF-8. */
export type SafePath = string | Buffer;

const PATH_MAX = 4096;
const NAME_MAX = 255;
const SLASH = 0x2f;

/**
 * Linux names an open descriptor's directory at `/proc/self/fd/N`: a path through it reaches that
 * very directory, whatever was swapped in at its name since (an `openat` without native code).
 * Elsewhere (macOS has no such link) the layer falls back to names and re-checks them: weaker, a
 * swap between the check and the use remains possible there. `AALIS_SAFE_FILE_PORTABLE=1` forces
 * that fallback on Linux, so its tests run here.
 */
export const HAS_PROC_FD = process.platform === 'linux' && process.env.AALIS_SAFE_FILE_PORTABLE !== '1';

/** The bytes of a path. */
export function bytesOf(path: SafePath): Buffer {
  return typeof path === 'string' ? Buffer.from(path, 'utf8') : path;
}

/** A path for messages (bytes that are not UTF-8 shown as U+FFFD). */
export function shownPath(path: SafePath): string {
  return typeof path === 'string' ? path : path.toString('utf8');
}

/** Checks a judged path: absolute, normalised, within PATH_MAX and NAME_MAX. Returns its bytes. */
export function checkedPath(path: SafePath): Buffer {
  const bytes = bytesOf(path);
  const shown = shownPath(path);
  if (bytes.length === 0 || bytes[0] !== SLASH || bytes.includes(0)) {
    throw new SafeFileError('bad-path', shown, 'it is not an absolute path (or holds a NUL byte).', 'Pass the real path the check judged.');
  }
  if (bytes.length >= PATH_MAX) {
    throw new SafeFileError('path-too-long', shown.slice(0, 120) + '…', `it is ${bytes.length} bytes long, over PATH_MAX (${PATH_MAX}); nothing was written.`, 'Use a shorter path.');
  }
  if (bytes.length === 1) return bytes;
  for (const segment of segmentsOf(bytes)) {
    if (segment.length === 0 || (segment.length === 1 && segment[0] === 0x2e) || (segment.length === 2 && segment[0] === 0x2e && segment[1] === 0x2e)) {
      throw new SafeFileError('bad-path', shown, "it is not normalised (an empty, '.' or '..' segment).", 'Pass the real path the check judged.');
    }
    if (segment.length > NAME_MAX) {
      throw new SafeFileError('path-too-long', shown.slice(0, 120) + '…', `one of its names is ${segment.length} bytes long, over NAME_MAX (${NAME_MAX}); nothing was written.`, 'Use a shorter name.');
    }
  }
  return bytes;
}

/** The names of an absolute path, root first. */
export function segmentsOf(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 1;
  for (let i = 1; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === SLASH) {
      out.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  return out;
}

/** The parent directory and the final name of a checked path (the root has no parent). */
export function splitPath(bytes: Buffer): { parent: Buffer; name: Buffer } {
  const at = bytes.lastIndexOf(SLASH);
  return { parent: at === 0 ? Buffer.from('/') : bytes.subarray(0, at), name: bytes.subarray(at + 1) };
}

/** `dir` + `/` + `name`, as bytes. */
export function joinBytes(dir: Buffer, name: Buffer): Buffer {
  return dir.length === 1 ? Buffer.concat([dir, name]) : Buffer.concat([dir, Buffer.from('/'), name]);
}

/** Maps an operating system error on `path` to a {@link SafeFileError}. */
export function refusalOf(error: unknown, path: Buffer, doing: string): SafeFileError {
  if (error instanceof SafeFileError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'mount-in-tree') return new SafeFileError('mount-point', path.toString('utf8'), `${doing} stopped at a mount point inside it; what is mounted there was left as it is (what lay before it may be gone).`, 'Unmount it first, then remove the rest.');
  const shown = path.toString('utf8');
  if (code === 'ENAMETOOLONG') return new SafeFileError('path-too-long', shown, `${doing} failed: the name is too long for the system; nothing was written.`, 'Use a shorter path.');
  if (code === 'ELOOP') return new SafeFileError('final-symlink', shown, `${doing} found a symlink where a file or directory was judged; it was not followed.`, 'Remove the symlink, or name the place it points to (it is judged there).');
  if (code === 'ENOTDIR') return new SafeFileError('not-a-directory', shown, `${doing} failed: a parent is not a directory.`);
  if (code === 'ENOENT') return new SafeFileError('missing-parent', shown, `${doing} failed: it or a parent does not exist.`);
  if (code === 'EXDEV') return new SafeFileError('cross-device', shown, `${doing} failed: source and target are on different file systems; nothing was moved.`, 'Copy it instead.');
  if (code === 'EACCES' || code === 'EPERM') return new SafeFileError('permission', shown, `${doing} failed: the system denied access to the daemon's user (${code}); nothing was written.`, 'Choose a place this user may write, or change its permissions.');
  if (code === 'EEXIST') return new SafeFileError('exists', shown, `${doing} failed: something exists at that name already.`);
  return new SafeFileError('io', shown, `${doing} failed: ${(error as Error).message}`);
}

/** The path the kernel says an open descriptor is at; `undefined` when it cannot say (or the file was deleted). */
async function openedPathOf(handle: FileHandle): Promise<Buffer | undefined> {
  try {
    const path = await readlink(`/proc/self/fd/${handle.fd}`, { encoding: 'buffer' });
    return path.subarray(-10).toString('latin1') === ' (deleted)' ? undefined : path;
  } catch {
    return undefined;
  }
}

/**
 * Verifies that an open descriptor is the file or directory at `expected`: on Linux by the
 * kernel's own name for it; elsewhere by the real path of `expected` and a device and inode match.
 */
export async function verifyOpened(handle: FileHandle, expected: Buffer): Promise<void> {
  if (HAS_PROC_FD) {
    const actual = await openedPathOf(handle);
    if (actual === undefined || !actual.equals(expected)) {
      throw new SafeFileError(
        'opened-elsewhere',
        expected.toString('utf8'),
        `what was opened is at ${actual === undefined ? 'a deleted or unknown place' : actual.toString('utf8')} (a symlink or a directory swapped in during the operation); nothing was written.`,
        'Try again once nothing else changes the directory.',
      );
    }
    return;
  }
  const [real, opened, named] = await Promise.all([realpath(expected, { encoding: 'buffer' }).catch(() => undefined), handle.stat(), lstat(expected).catch(() => undefined)]);
  if (real === undefined || !real.equals(expected) || named === undefined || named.ino !== opened.ino || named.dev !== opened.dev) {
    throw new SafeFileError('opened-elsewhere', expected.toString('utf8'), 'what was opened is not the file at the judged path (a swap during the operation); nothing was written.');
  }
}

/** `O_DIRECTORY|O_NOFOLLOW` on a symlink to a directory fails with ENOTDIR: name it what it is. */
async function directoryRefusal(error: unknown, opened: Buffer, judged: Buffer): Promise<SafeFileError> {
  if ((error as NodeJS.ErrnoException).code === 'ENOTDIR' && (await lstat(opened).catch(() => undefined))?.isSymbolicLink()) {
    return new SafeFileError('parent-elsewhere', judged.toString('utf8'), 'the directory is a symlink, so it resolves elsewhere than judged; nothing was written.', 'Name the directory it points to (it is judged there).');
  }
  return refusalOf(error, judged, 'opening the directory');
}

/**
 * Refuses a directory on a kernel file system (kernel-file-system.ts) as a place to write: a
 * cgroup hierarchy or sysfs bound into a workspace is the host kernel's, and a directory made or
 * renamed there is a control group made or moved (found by an attack, as root: write_file's
 * parents made a cgroup, move_path renamed one). Judged by what the opened directory is on.
 */
export function refuseKernelDirectory(fd: number, dir: Buffer): void {
  const kernel = kernelFileSystemOfFd(fd);
  if (kernel === undefined) return;
  throw new SafeFileError('kernel-file-system', dir.toString('utf8'), `it is on ${kernel}, the host kernel's own view (its processes, settings, control groups), not a directory of yours; nothing was written there.`, 'Change it from a command instead, where its sandbox allows that.');
}

/**
 * An open, verified directory: every name in it is reached through the descriptor (on Linux), so
 * swapping the directory's path for a symlink after the check changes nothing the layer does.
 */
export class DirAnchor {
  private constructor(
    /** The judged path of the directory. */
    readonly dir: Buffer,
    private readonly handle: FileHandle,
  ) {}

  /**
   * Opens a directory that must exist at exactly `dir` (no symlink at any of its names) and
   * verifies it. A symlinked or swapped parent is refused with `parent-elsewhere`.
   */
  static async open(dir: Buffer): Promise<DirAnchor> {
    let handle: FileHandle;
    try {
      handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') {
        throw new SafeFileError('parent-elsewhere', dir.toString('utf8'), 'the directory is a symlink, so it resolves elsewhere than judged; nothing was written.', 'Name the directory it points to (it is judged there).');
      }
      if (code === 'ENOENT') throw new SafeFileError('missing-parent', dir.toString('utf8'), 'the directory does not exist; nothing was written.');
      throw await directoryRefusal(error, dir, dir);
    }
    const anchor = new DirAnchor(dir, handle);
    try {
      await verifyOpened(handle, dir);
      refuseKernelDirectory(handle.fd, dir);
    } catch (error) {
      await handle.close();
      if (error instanceof SafeFileError && error.code === 'opened-elsewhere') {
        throw new SafeFileError('parent-elsewhere', dir.toString('utf8'), `the directory resolves elsewhere than judged (${error.message}).`, 'Name the real directory; a symlinked parent is judged where it lands.');
      }
      throw error;
    }
    return anchor;
  }

  /** The path that reaches `name` inside this very directory. */
  entry(name: Buffer): Buffer {
    return HAS_PROC_FD ? Buffer.concat([Buffer.from(`/proc/self/fd/${this.handle.fd}/`), name]) : joinBytes(this.dir, name);
  }

  /** The judged path of `name` inside this directory. */
  judged(name: Buffer): Buffer {
    return joinBytes(this.dir, name);
  }

  /** Opens a subdirectory through this one, refusing a symlink, and verifies it. */
  async child(name: Buffer): Promise<DirAnchor> {
    const path = this.judged(name);
    let handle: FileHandle;
    try {
      handle = await open(this.entry(name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
        throw new SafeFileError('parent-elsewhere', path.toString('utf8'), 'the directory is a symlink, so it resolves elsewhere than judged; nothing was written.', 'Name the directory it points to (it is judged there).');
      }
      throw await directoryRefusal(error, this.entry(name), path);
    }
    try {
      await verifyOpened(handle, path);
      refuseKernelDirectory(handle.fd, path);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new DirAnchor(path, handle);
  }

  /** fsyncs the directory, so a rename or a create in it survives a crash. */
  async sync(): Promise<void> {
    try {
      await this.handle.sync();
    } catch {
      // Some filesystems refuse fsync on a directory; the rename itself is still atomic.
    }
  }

  /** Closes the descriptor. */
  async close(): Promise<void> {
    await this.handle.close().catch(() => {});
  }
}

/**
 * The real path of one of the daemon's own directories (a data directory may sit behind a
 * symlink, as `/var` does on macOS): the nearest existing ancestor resolved, the missing names
 * appended. Not for judged paths: those come real from the reach check.
 */
export async function realDirOf(dir: string): Promise<string> {
  const missing: string[] = [];
  let current = resolve(dir);
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const parent = dirname(current);
      if (parent === current) return resolve(dir);
      missing.push(basename(current));
      current = parent;
    }
  }
}

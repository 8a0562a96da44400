import { closeSync, constants, type Dirent, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { checkedPath, HAS_PROC_FD, joinBytes, refuseKernelDirectory, refusalOf, type SafePath, shownPath } from './dir-anchor.js';
import { atFd, type DirId, DirMovedError, idOf, openDirNoFollow, upTo } from './fd-tree.js';
import { kernelFileSystemOf } from './kernel-file-system.js';
import { SafeFileError } from './safe-file-error.js';

/*
 * A tree read by descriptors (Linux, /proc/self/fd), for host-side tools that judge every name
 * under a directory and then act on them: the pod's copy into its sandbox, the check that a moved
 * directory holds nothing deny-read. Each directory is entered by name relative to its open
 * parent (O_NOFOLLOW: one swapped for a symlink is never entered), so what is visited is the tree
 * under the judged root, whatever is swapped in at its path meanwhile (found by an attack: a
 * walk by path listed a deny-read folder swapped in mid-walk). Names are bytes and any depth is
 * walked: paths past PATH_MAX are never opened whole. Where /proc/self/fd is missing (macOS) the
 * walk goes by path, weaker as the rest of the safe file layer is there (dir-anchor.ts).
 */

/** What a walk met: a directory (entered if the visitor says so), a regular file, a symlink (never followed) or anything else. */
export type WalkKind = 'dir' | 'file' | 'symlink' | 'other';

/** An entry a walk reached. */
export interface WalkEntry {
  /** The judged path: the root joined with the names down to this entry (may pass PATH_MAX). */
  readonly path: Buffer;
  readonly name: Buffer;
  readonly kind: WalkKind;
  /**
   * A path the kernel resolves to this very entry during the visit (through the open parent on
   * Linux): open it with O_NOFOLLOW to act on what was judged. Valid only until the visit returns.
   */
  readonly at: Buffer;
}

/** The visitor's answer: `enter` goes into a directory (anything else is passed over), `stop` ends the walk. */
export type WalkStep = 'enter' | 'skip' | 'stop';

function kindOf(entry: Dirent<Buffer>, at: Buffer): WalkKind | undefined {
  let e: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean } = entry;
  if (!entry.isDirectory() && !entry.isFile() && !entry.isSymbolicLink() && !entry.isFIFO() && !entry.isSocket() && !entry.isBlockDevice() && !entry.isCharacterDevice()) {
    // a file system that does not fill in the type (DT_UNKNOWN): asked of the entry itself
    try {
      e = lstatSync(at);
    } catch {
      return undefined; // gone since the listing
    }
  }
  return e.isDirectory() ? 'dir' : e.isFile() ? 'file' : e.isSymbolicLink() ? 'symlink' : 'other';
}

function swapped(path: Buffer): SafeFileError {
  return new SafeFileError('opened-elsewhere', shownPath(path), 'it was listed as a directory and is no longer one (swapped for a symlink or a file during the walk); nothing under it was visited.', 'Try again once nothing else changes the directory.');
}

/** Opens a directory the walk enters, by `at`; refused when it is no longer a directory (or cannot be opened). */
function openChild(at: Buffer, path: Buffer): number {
  let fd: number | undefined;
  try {
    fd = openDirNoFollow(at);
  } catch (error) {
    throw refusalOf(error, path, 'opening a directory of the tree');
  }
  if (fd === undefined) throw swapped(path);
  return fd;
}

/** Opens the walk's root: no symlink at its name, verified to be at the judged path, not on a kernel file system. */
function openRoot(root: Buffer): number {
  let fd: number | undefined;
  try {
    fd = openDirNoFollow(root);
  } catch (error) {
    throw refusalOf(error, root, 'opening the directory');
  }
  if (fd === undefined) {
    const link = (() => {
      try {
        return lstatSync(root).isSymbolicLink();
      } catch {
        return undefined;
      }
    })();
    if (link === undefined) throw new SafeFileError('missing', shownPath(root), 'there is nothing at that name.');
    if (link) throw new SafeFileError('final-symlink', shownPath(root), 'it is a symlink; name the directory it points to (it is judged there).');
    throw new SafeFileError('not-a-directory', shownPath(root), 'it is not a directory.');
  }
  try {
    if (HAS_PROC_FD) {
      const actual = readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
      if (!actual.equals(root)) throw new SafeFileError('opened-elsewhere', shownPath(root), `what was opened is at ${actual.toString('utf8')} (a symlinked or swapped parent); nothing was visited.`, 'Name the real directory.');
    }
    refuseKernelDirectory(fd, root);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** One directory under visit: its judged path, its parent's identity (checked on the way back up), its entries. */
interface Frame {
  readonly path: Buffer;
  readonly parentId?: DirId;
  readonly entries: Dirent<Buffer>[];
  i: number;
}

/**
 * Visits every entry under the directory `root` (judged, real), depth first, each once, without
 * following any symlink; directories are entered when the visitor answers `enter`. A directory on
 * a kernel file system (procfs, sysfs, a cgroup tree mounted inside) is refused with
 * `kernel-file-system`, one swapped mid-walk with `opened-elsewhere`: the caller decides whether
 * that ends its work (it should: what was swapped in was never judged). At most two descriptors
 * are open at once on Linux.
 */
export async function walkTreeNoFollow(root: SafePath, visit: (entry: WalkEntry) => WalkStep | Promise<WalkStep>): Promise<void> {
  const rootPath = checkedPath(root);
  if (!HAS_PROC_FD) return walkByPath(rootPath, visit);
  let cur = openRoot(rootPath);
  const list = (fd: number) => readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true, encoding: 'buffer' });
  const frames: Frame[] = [];
  try {
    frames.push({ path: rootPath, entries: list(cur), i: 0 });
    while (frames.length > 0) {
      const top = frames.at(-1)!;
      if (top.i < top.entries.length) {
        const entry = top.entries[top.i++]!;
        const at = atFd(cur, entry.name);
        const kind = kindOf(entry, at);
        if (kind === undefined) continue;
        const path = joinBytes(top.path, entry.name);
        const step = await visit({ path, name: entry.name, kind, at });
        if (step === 'stop') return;
        if (step !== 'enter' || kind !== 'dir') continue;
        const child = openChild(at, path);
        try {
          refuseKernelDirectory(child, path);
          frames.push({ path, parentId: idOf(cur), entries: list(child), i: 0 });
        } catch (error) {
          closeSync(child);
          throw error;
        }
        closeSync(cur);
        cur = child;
        continue;
      }
      frames.pop();
      if (top.parentId === undefined) return;
      try {
        cur = upTo(cur, top.parentId); // closes the child
      } catch (error) {
        if (error instanceof DirMovedError) throw new SafeFileError('opened-elsewhere', shownPath(top.path), 'it was moved out of the tree during the walk; the walk stopped.', 'Try again once nothing else changes the directory.');
        throw error;
      }
    }
  } finally {
    closeSync(cur);
  }
}

/** The portable walk (no /proc/self/fd): by path, each directory opened without following its final name. */
async function walkByPath(root: Buffer, visit: (entry: WalkEntry) => WalkStep | Promise<WalkStep>): Promise<void> {
  closeSync(openRoot(root));
  const stack: Buffer[] = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) {
      const path = joinBytes(dir, entry.name);
      const kind = kindOf(entry, path);
      if (kind === undefined) continue;
      const step = await visit({ path, name: entry.name, kind, at: path });
      if (step === 'stop') return;
      if (step !== 'enter' || kind !== 'dir') continue;
      closeSync(openChild(path, path));
      stack.push(path);
    }
  }
}

/**
 * Opens a regular file a walk is visiting, through {@link WalkEntry.at} (never following a
 * symlink at its name): refused when it is no longer a regular file, or lies on a kernel file
 * system (a single file bound from /proc). Call it during the visit.
 */
export async function openWalkedFile(entry: WalkEntry): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(entry.at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SafeFileError('missing', shownPath(entry.path), 'it was removed during the walk.');
    throw refusalOf(error, entry.path, 'opening the file');
  }
  try {
    if (!(await handle.stat()).isFile()) throw new SafeFileError('not-a-file', shownPath(entry.path), 'it is not a regular file (any more).');
    const kernel = await kernelFileSystemOf(handle);
    if (kernel !== undefined) throw new SafeFileError('kernel-file-system', shownPath(entry.path), `it is on ${kernel}, which read by the daemon is its own process and the host's kernel, not a file of yours.`);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

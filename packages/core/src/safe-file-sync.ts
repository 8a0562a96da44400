import { closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, renameSync, rmSync, type Stats, unlinkSync } from 'node:fs';
import { bytesOf, checkedPath, HAS_PROC_FD, joinBytes, refuseKernelDirectory, refusalOf, type SafePath, segmentsOf, shownPath, splitPath } from './dir-anchor.js';
import { removeTreeAt } from './fd-tree.js';
import { SafeFileError } from './safe-file-error.js';

// The synchronous side of the safe file layer, for code that cannot await (the sandbox's looks
// run between a command's events). Same rules as safe-file.ts: directories opened
// O_DIRECTORY|O_NOFOLLOW and verified, names reached through /proc/self/fd on Linux.

function lstatOrUndefined(path: Buffer): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

class SyncAnchor {
  private constructor(
    readonly dir: Buffer,
    private readonly fd: number,
  ) {}

  static open(dir: Buffer, opened: Buffer = dir): SyncAnchor {
    let fd: number;
    try {
      fd = openSync(opened, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || (code === 'ENOTDIR' && lstatOrUndefined(opened)?.isSymbolicLink())) {
        throw new SafeFileError('parent-elsewhere', shownPath(dir), 'the directory is a symlink, so it resolves elsewhere than judged; nothing was changed.', 'Name the directory it points to (it is judged there).');
      }
      if (code === 'ENOENT') throw new SafeFileError('missing-parent', shownPath(dir), 'the directory does not exist; nothing was changed.');
      throw refusalOf(error, dir, 'opening the directory');
    }
    const anchor = new SyncAnchor(dir, fd);
    try {
      anchor.#verify();
      refuseKernelDirectory(fd, dir);
    } catch (error) {
      anchor.close();
      throw error;
    }
    return anchor;
  }

  #verify(): void {
    if (HAS_PROC_FD) {
      let actual: Buffer | undefined;
      try {
        actual = readlinkSync(`/proc/self/fd/${this.fd}`, { encoding: 'buffer' });
      } catch {
        actual = undefined;
      }
      if (actual === undefined || !actual.equals(this.dir)) {
        throw new SafeFileError('parent-elsewhere', shownPath(this.dir), `the directory opened is at ${actual === undefined ? 'an unknown place' : actual.toString('utf8')}, not where it was judged; nothing was changed.`);
      }
      return;
    }
    let real: Buffer | undefined;
    try {
      real = realpathSync.native(this.dir, { encoding: 'buffer' }); // the JS one decodes a Buffer path as text (a name not UTF-8 is then missing)
    } catch {
      real = undefined;
    }
    const opened = fstatSync(this.fd);
    const named = lstatOrUndefined(this.dir);
    if (real === undefined || !real.equals(this.dir) || named === undefined || named.ino !== opened.ino || named.dev !== opened.dev) {
      throw new SafeFileError('parent-elsewhere', shownPath(this.dir), 'the directory opened is not the one at the judged path; nothing was changed.');
    }
  }

  /** The open directory's descriptor, for a walk by descriptors below it (fd-tree.ts). */
  get descriptor(): number {
    return this.fd;
  }

  entry(name: Buffer): Buffer {
    return HAS_PROC_FD ? Buffer.concat([Buffer.from(`/proc/self/fd/${this.fd}/`), name]) : joinBytes(this.dir, name);
  }

  child(name: Buffer): SyncAnchor {
    return SyncAnchor.open(joinBytes(this.dir, name), this.entry(name));
  }

  sync(): void {
    try {
      fsyncSync(this.fd);
    } catch {
      // Some filesystems refuse fsync on a directory.
    }
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}

/** The deepest existing directory of `dir`, then each missing one made inside a verified parent. */
function anchorDirSync(dir: Buffer, mode: number): SyncAnchor {
  const segments = dir.length === 1 ? [] : segmentsOf(dir);
  const prefixOf = (depth: number) => (depth === 0 ? Buffer.from('/') : dir.subarray(0, segments.slice(0, depth).reduce((n, s) => n + 1 + s.length, 0)));
  let depth = segments.length;
  while (depth > 0 && lstatOrUndefined(prefixOf(depth)) === undefined) depth--;
  let anchor = SyncAnchor.open(prefixOf(depth));
  try {
    for (const name of segments.slice(depth)) {
      try {
        mkdirSync(anchor.entry(name), { mode });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw refusalOf(error, joinBytes(anchor.dir, name), 'making a directory');
      }
      const next = anchor.child(name);
      anchor.sync();
      anchor.close();
      anchor = next;
    }
  } catch (error) {
    anchor.close();
    throw error;
  }
  return anchor;
}

/** {@link makeDirs}, synchronously: missing directories made one at a time inside verified parents. */
export function makeDirsSync(path: SafePath, options: { readonly mode?: number } = {}): void {
  anchorDirSync(checkedPath(path), options.mode ?? 0o755).close();
}

/**
 * {@link renameNoFollow}, synchronously: `from` moves to `to` (parents made when `createParents`),
 * neither final name followed; a symlink at `to` is refused, and so is anything there unless
 * `replace`. Across file systems it throws `cross-device`; the caller may copy instead.
 */
export function renameNoFollowSync(from: SafePath, to: SafePath, options: { readonly replace?: boolean; readonly createParents?: boolean } = {}): void {
  const source = checkedPath(from);
  const target = checkedPath(to);
  const s = splitPath(source);
  const t = splitPath(target);
  if (s.name.length === 0 || t.name.length === 0) throw new SafeFileError('bad-path', shownPath(from), 'the root cannot be renamed.');
  const fromDir = SyncAnchor.open(s.parent);
  let toDir: SyncAnchor | undefined;
  try {
    toDir = options.createParents === true ? anchorDirSync(t.parent, 0o700) : SyncAnchor.open(t.parent);
    if (lstatOrUndefined(fromDir.entry(s.name)) === undefined) throw new SafeFileError('missing', shownPath(from), 'there is nothing at that name to move.');
    const existing = lstatOrUndefined(toDir.entry(t.name));
    if (existing?.isSymbolicLink()) throw new SafeFileError('final-symlink', shownPath(to), 'a symlink sits at the target name; nothing was moved.', 'Remove the symlink first.');
    if (existing !== undefined && options.replace === false) throw new SafeFileError('exists', shownPath(to), 'something exists at the target name; nothing was moved.');
    renameSync(fromDir.entry(s.name), toDir.entry(t.name));
    toDir.sync();
    fromDir.sync();
  } catch (error) {
    throw refusalOf(error, source, `moving it to ${shownPath(to)}`);
  } finally {
    fromDir.close();
    toDir?.close();
  }
}

/**
 * {@link moveAside}, synchronously: the entry at `path` (never followed) moves into `intoDir`
 * (made when missing, each directory verified), under its own name or `name`, `~N` added when
 * taken. Returns the new path (bytes when `path` was bytes). `cross-device` when `intoDir` is on
 * another file system.
 */
export function moveAsideSync(path: SafePath, intoDir: SafePath, name?: SafePath): SafePath {
  const dir = checkedPath(intoDir);
  makeDirsSync(dir, { mode: 0o700 });
  const base = name === undefined ? splitPath(checkedPath(path)).name : bytesOf(name);
  for (let n = 0; n < 1000; n++) {
    const candidate = Buffer.concat([dir, Buffer.from('/'), base, Buffer.from(n === 0 ? '' : `~${n}`)]);
    try {
      renameNoFollowSync(path, candidate, { replace: false });
      return typeof path === 'string' ? candidate.toString('utf8') : candidate;
    } catch (error) {
      if (!(error instanceof SafeFileError) || (error.code !== 'exists' && error.code !== 'final-symlink')) throw error;
    }
  }
  throw new SafeFileError('exists', shownPath(path), `no free name in ${shownPath(intoDir)} to move it to.`);
}

/** The verified parent, or undefined when it does not exist (nothing to remove there). */
function anchorUnlessMissingSync(parent: Buffer): SyncAnchor | undefined {
  try {
    return SyncAnchor.open(parent);
  } catch (error) {
    if (error instanceof SafeFileError && error.code === 'missing-parent') return undefined;
    throw error;
  }
}

/**
 * Removes what is at `path`, a whole tree too, never following a symlink anywhere: the parent is
 * opened and verified to be the judged path (no symlink on the way), and the tree removed by
 * descriptors below it (fd-tree.ts); a directory swapped or moved meanwhile stops the removal with
 * nothing outside touched. False when nothing was there. Without /proc/self/fd (macOS) the tree is
 * removed by path from the verified parent.
 */
export function removeTreeSync(path: SafePath): boolean {
  const bytes = checkedPath(path);
  const { parent, name } = splitPath(bytes);
  const anchor = anchorUnlessMissingSync(parent);
  if (anchor === undefined) return false;
  try {
    if (lstatOrUndefined(anchor.entry(name)) === undefined) return false;
    if (HAS_PROC_FD) removeTreeAt(anchor.descriptor, name);
    else rmSync(anchor.entry(name), { recursive: true, force: true });
    anchor.sync();
    return true;
  } catch (error) {
    throw refusalOf(error, bytes, 'removing it');
  } finally {
    anchor.close();
  }
}

/** Removes a file or symlink (never followed, never a directory) in a verified parent. False when nothing was there. */
export function removeFileSync(path: SafePath): boolean {
  const bytes = checkedPath(path);
  const { parent, name } = splitPath(bytes);
  const anchor = anchorUnlessMissingSync(parent);
  if (anchor === undefined) return false;
  try {
    const current = lstatOrUndefined(anchor.entry(name));
    if (current === undefined) return false;
    if (current.isDirectory()) throw new SafeFileError('not-a-file', shownPath(path), 'it is a directory; it was not removed.');
    unlinkSync(anchor.entry(name));
    anchor.sync();
    return true;
  } catch (error) {
    throw refusalOf(error, bytes, 'removing the file');
  } finally {
    anchor.close();
  }
}

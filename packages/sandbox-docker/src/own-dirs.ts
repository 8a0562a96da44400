import { chmodSync, closeSync, constants, fchmodSync, fstatSync, openSync } from 'node:fs';

/*
 * A daemon that is not root runs its containers as its own uid, so what a command makes belongs to
 * the daemon, and the command may close it to its owner (`chmod 111` a folder, `chmod 311 .` the
 * workspace, `chmod 555` a folder holding a landing). The check after the run then could not list
 * or remove what it had to judge, and left it (found by an attack, h116: an .envrc there stayed,
 * and direnv, which opens it by name, loaded it). The owner may give its bits back: the check does
 * so where it meets such a folder, and says so.
 */

/** `O_PATH` (Linux): a descriptor naming an inode without opening it, so needing no permission on it. */
const O_PATH = 0o10000000;

/**
 * Gives the directory at `path` its owner's read, write and search bits when this process owns it
 * and it lacks one; by an `O_PATH` descriptor, never following a link. The mode it had, or
 * undefined when nothing was changed (not ours, not a directory, already open, root, gone).
 */
export function openUpOwnDir(path: Buffer): number | undefined {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return undefined; // root lists and removes whatever the mode
  let fd: number;
  try {
    fd = openSync(path, O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    const mode = Number(st.mode & 0o7777n);
    if (Number(st.uid) !== uid || (mode & 0o700) === 0o700) return undefined;
    chmodSync(`/proc/self/fd/${fd}`, mode | 0o700);
    return mode;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** {@link openUpOwnDir} for the entry `name` of the directory open at `dirFd` (a short path, however deep the tree). */
export function openUpOwnAt(dirFd: number, name: Buffer): number | undefined {
  return openUpOwnDir(Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), name]));
}

/** {@link openUpOwnDir} for a directory already open at `fd`: by `fchmod`, the descriptor's own inode. */
export function openUpOwnFd(fd: number): number | undefined {
  const uid = process.getuid?.();
  if (uid === undefined || uid === 0) return undefined;
  try {
    const st = fstatSync(fd, { bigint: true });
    const mode = Number(st.mode & 0o7777n);
    if (!st.isDirectory() || Number(st.uid) !== uid || (mode & 0o700) === 0o700) return undefined;
    fchmodSync(fd, mode | 0o700);
    return mode;
  } catch {
    return undefined;
  }
}

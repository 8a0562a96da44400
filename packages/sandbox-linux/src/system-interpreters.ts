import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { findExecutable } from './tools.js';

/*
 * The interpreters the sandbox runs programs of its own in: python3 for the host-side helpers (the
 * root map, the tree index, the launcher), perl for a prepared sandbox's shim (prepared.ts). A root
 * daemon runs them as root, so the interpreter must be the program itself: a version manager's shim
 * in front of it on PATH is a shell script that reads BASH_ENV, sources rc files and can add variables.
 */

/** Programs found compiled, by path, with the state of the file then (device, inode, size, mtime, ctime: symlinks followed). */
const elves = new Map<string, string>();

function stampOf(p: string): string | undefined {
  try {
    const st = statSync(p, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * Whether `p` (symlinks followed) is a compiled program, not a script a shell would run first. A
 * file found compiled before is not opened again while a stat of it shows the same file unchanged
 * (each run asks, on the daemon's thread).
 */
function isElf(p: string): boolean {
  const stamp = stampOf(p);
  if (stamp !== undefined && elves.get(p) === stamp) return true;
  const elf = readsAsElf(p);
  if (elf && stamp !== undefined) elves.set(p, stamp);
  else elves.delete(p);
  return elf;
}

function readsAsElf(p: string): boolean {
  try {
    const fd = openSync(realpathSync.native(p), 'r');
    try {
      const head = Buffer.alloc(4);
      return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** The interpreter itself: `python` when it names one, else the system's, else the first on PATH; never a script. */
export function findPython(python?: string): string | undefined {
  const names = python ? [python] : ['/usr/bin/python3', '/bin/python3', 'python3'];
  for (const n of names) {
    const p = findExecutable(n);
    if (p && isElf(p)) return p;
  }
  return undefined;
}

/**
 * The system's perl (`/usr/bin/perl`, else `/bin/perl`), compiled; never one found on PATH, which a
 * version manager or a user's own build could put first. Undefined when there is none.
 */
export function findPerl(): string | undefined {
  for (const p of ['/usr/bin/perl', '/bin/perl']) {
    const found = findExecutable(p);
    if (found && isElf(found)) return found;
  }
  return undefined;
}

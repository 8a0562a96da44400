import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { decodeName, utf8NameOf } from '@aalis/core';
import { MountPolicyError } from './mount-policy-error.js';

/** One entry met by {@link walk}: its path as text for the rules, and its exact bytes for the kernel. */
export interface WalkEntry {
  /**
   * The path as text, each name as core's `decodeName` gives it (a name that is not UTF-8 by its
   * bytes, as lone surrogates): the form the host-read landings name it in (a core.hooksPath of
   * `hk\xff`), as the Linux commit's walk does. U+FFFD here matched any such byte, and nothing the
   * readers named once they kept the bytes.
   */
  readonly path: string;
  /** The path's exact bytes. */
  readonly bytes: Buffer;
  /** Whether `path` is the exact text of `bytes` (every name on the way is UTF-8). */
  readonly utf8: boolean;
  readonly isDirectory: boolean;
  readonly isSymbolicLink: boolean;
  /** A regular file (what the listing said; undefined for a root). */
  readonly isFile?: boolean;
  /** A unix socket: what a program on the host listens on. */
  readonly isSocket?: boolean;
}

const SLASH = Buffer.from('/');

/**
 * Every entry under `root`, depth first, not following symlinks, skipping subtrees `visit` says
 * to. Names are read as bytes: a text listing turns a name that is not UTF-8 into U+FFFD, and the
 * walk could then neither open that directory nor see what is below it (a `.env` there stayed
 * readable in the container). A directory that cannot be listed (closed to the daemon, or past
 * PATH_MAX) is handed to `unlisted`; one gone since its parent was listed is passed over.
 */
export async function walk(root: WalkEntry, budget: { left: number }, visit: (entry: WalkEntry) => boolean, unlisted: (entry: WalkEntry) => void = () => {}): Promise<void> {
  let entries: Dirent[];
  try {
    entries = (await readdir(root.bytes, { withFileTypes: true, encoding: 'buffer' })) as unknown as Dirent[];
  } catch (error) {
    // gone since its parent was listed: nothing there to hide or to undo
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') unlisted(root);
    return;
  }
  for (const entry of entries) {
    budget.left -= 1;
    if (budget.left < 0) {
      throw new MountPolicyError(
        'walk-limit',
        `the roots to mount hold more entries than the docker sandbox checks against the deny patterns (under ${root.path})`,
        'run the command with a smaller workspace or fewer readable roots, or raise walkLimit',
      );
    }
    const name = entry.name as unknown as Buffer;
    const text = utf8NameOf(name);
    const under = root.path === '/';
    const child: WalkEntry = {
      path: under ? `/${text ?? decodeName(name)}` : `${root.path}/${text ?? decodeName(name)}`,
      bytes: under ? Buffer.concat([SLASH, name]) : Buffer.concat([root.bytes, SLASH, name]),
      utf8: root.utf8 && text !== undefined,
      isDirectory: entry.isDirectory(),
      isSymbolicLink: entry.isSymbolicLink(),
      isFile: entry.isFile(),
      isSocket: entry.isSocket(),
    };
    if (visit(child) && child.isDirectory) await walk(child, budget, visit, unlisted);
  }
}

export function walkRoot(path: string): WalkEntry {
  return { path, bytes: Buffer.from(path), utf8: true, isDirectory: true, isSymbolicLink: false };
}

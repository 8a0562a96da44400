import { statSync } from 'node:fs';
import { readRegularSync } from '@aalis/core';
import { dirname, join, resolve } from 'node:path';
import { realPathOfSync } from './real-path.js';

/** A repository as git finds it from a directory: the top of its working tree and its git directories. */
export interface RepoDirs {
  /** The directory holding `.git`: where git runs hooks of a non-bare repository. */
  readonly top: string;
  /** The worktree's own git directory. */
  readonly gitDir: string;
  /** The common directory, when `commondir` names another (a linked worktree). */
  readonly commonDir?: string;
}

/**
 * The repository `start` is in, found the way git finds it: the nearest `.git` upwards, a `.git`
 * file's `gitdir:` line (worktrees, submodules, `--separate-git-dir`), and that directory's
 * `commondir`. Real paths; undefined outside a repository.
 */
export function repoOf(start: string): RepoDirs | undefined {
  let dir = realPathOfSync(start);
  for (;;) {
    const found = gitDirAt(join(dir, '.git'));
    if (found !== undefined) {
      const common = readLine(join(found, 'commondir'));
      const commonDir = common === undefined ? undefined : realPathOfSync(resolve(found, common));
      return commonDir === undefined || commonDir === found ? { top: dir, gitDir: found } : { top: dir, gitDir: found, commonDir };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The git directories (common dirs) of the repository `start` is in (see {@link repoOf}): the
 * worktree's own git dir and the common dir when they differ. Real paths; empty outside a repository.
 */
export function gitDirsOf(start: string): string[] {
  const repo = repoOf(start);
  if (repo === undefined) return [];
  return repo.commonDir === undefined ? [repo.gitDir] : [repo.gitDir, repo.commonDir];
}

function gitDirAt(dotGit: string): string | undefined {
  try {
    const stat = statSync(dotGit);
    if (stat.isDirectory()) return realPathOfSync(dotGit);
    if (stat.isFile()) {
      const line = readLine(dotGit);
      const match = line?.match(/^gitdir:\s*(.+)$/);
      return match?.[1] ? realPathOfSync(resolve(dirname(dotGit), match[1])) : undefined;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * The first line of a small regular file; undefined for anything else. Read without waiting: a
 * `.git` judged a file by stat and then swapped for a FIFO (a process a session container left
 * running can) would block the daemon's thread for good in a read by path.
 */
function readLine(file: string): string | undefined {
  const read = readRegularSync(file, { maxBytes: 64 * 1024, follow: true });
  return read.kind === 'read' ? read.bytes.toString('utf8').split('\n')[0]?.trim() || undefined : undefined;
}

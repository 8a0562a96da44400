import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { realPathOfSync } from './real-path.js';

/**
 * The git directories (common dirs) of the repository `start` is in, found the way git finds
 * them: the nearest `.git` upwards, a `.git` file's `gitdir:` line (worktrees, submodules,
 * `--separate-git-dir`), and that directory's `commondir`. Returns the worktree's own git dir and
 * the common dir when they differ. Real paths; empty outside a repository.
 */
export function gitDirsOf(start: string): string[] {
  let dir = realPathOfSync(start);
  for (;;) {
    const dotGit = join(dir, '.git');
    const found = gitDirAt(dotGit);
    if (found !== undefined) {
      const dirs = new Set([found]);
      const common = readLine(join(found, 'commondir'));
      if (common !== undefined) dirs.add(realPathOfSync(resolve(found, common)));
      return [...dirs];
    }
    const parent = dirname(dir);
    if (parent === dir) return [];
    dir = parent;
  }
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

function readLine(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').split('\n')[0]?.trim() || undefined;
  } catch {
    return undefined;
  }
}

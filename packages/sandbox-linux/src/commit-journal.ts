import { appendFileSync, closeSync, existsSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openDir } from './host-walk.js';
import { removeAt } from './safe-move.js';

/*
 * A daemon killed during a commit leaves part of the command's writes on the host and, where it
 * was copying, a fresh `.aalis-commit-*` temp in a host directory. The journal in the run's layer
 * folder makes the next start truthful about it: `committing` exists from the commit's start to
 * its end, and each temp's host directory and name is appended before the temp is made. The
 * sweep of a dead daemon's run folder (run-dir.ts) removes the temps it names and says
 * "partially committed" instead of "discarded".
 */

const COMMITTING = 'committing';
const COMMITTED = 'committed';
const TEMPS = 'commit-temps';

/** Marks the commit of the layers under `layersDir` as begun. */
export function beginCommit(layersDir: string): void {
  writeFileSync(join(layersDir, COMMITTING), `${process.pid}\n`, { mode: 0o600 });
}

/** Marks it as ended (whatever it committed or refused): nothing of it is left unjudged. */
export function endCommit(layersDir: string): void {
  renameSync(join(layersDir, COMMITTING), join(layersDir, COMMITTED));
}

/** Where a dead daemon's commit stood: never begun, cut off midway, or ended. */
export type CommitState = 'none' | 'partial' | 'done';

/** Records a temp before it is made in host directory `hostDir`; `upper` is the overlay's upper layer (`<layers>/<n>/upper`). */
export function recordTemp(upper: string, hostDir: string, name: string): void {
  appendFileSync(join(dirname(dirname(upper)), TEMPS), `${JSON.stringify({ dir: hostDir, name })}\n`, { mode: 0o600 });
}

/**
 * For a dead daemon's layer folder: whether a commit had begun (then part of it may be on the host)
 * and the stray temps removed. A temp's directory is entered only if it is still the real path it
 * was (no symlink swapped in since), and only the exact recorded name is removed.
 */
export function recoverCommit(layersDir: string): { state: CommitState; removed: number } {
  const state: CommitState = existsSync(join(layersDir, COMMITTED)) ? 'done' : existsSync(join(layersDir, COMMITTING)) ? 'partial' : 'none';
  let removed = 0;
  let lines: string[] = [];
  try {
    lines = readFileSync(join(layersDir, TEMPS), 'utf8').split('\n').filter(Boolean);
  } catch {
    // no temps recorded
  }
  for (const line of lines) {
    try {
      const { dir, name } = JSON.parse(line) as { dir: string; name: string };
      if (!/^\.aalis-commit-[0-9a-f]{12}$/.test(name) || realpathSync(dir) !== dir) continue;
      const fd = openDir(dir);
      if (fd === undefined) continue;
      try {
        if (existsSync(`/proc/self/fd/${fd}/${name}`)) {
          removeAt(fd, Buffer.from(name));
          removed += 1;
        }
      } finally {
        closeSync(fd);
      }
    } catch {
      // gone, or not a directory any more: nothing of ours is left there
    }
  }
  return { state, removed };
}

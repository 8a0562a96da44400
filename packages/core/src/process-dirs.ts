import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from './process-alive.js';

/*
 * Folders a process makes for itself in a shared directory (the temp directory): named
 * `<prefix><pid>-<six random characters>`, removed when the process exits. One killed first leaves
 * its folder; the next process that makes one with the same prefix removes those of this user's
 * processes that are gone. Nothing else is touched: not a symlink, not another user's folder, not
 * a name made otherwise, not a folder of a process still alive.
 */

/** Makes `<parent>/<prefix><pid>-XXXXXX` (mode 0700), removed with its contents when this process exits, after sweeping those of processes gone ({@link sweepProcessDirs}). */
export function makeProcessDir(parent: string, prefix: string): string {
  sweepProcessDirs(parent, prefix);
  const dir = mkdtempSync(join(parent, `${prefix}${process.pid}-`));
  process.once('exit', () => {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // what another user's program left in it: the folder stays, for a later sweep by a user who may
    }
  });
  return dir;
}

/** Removes the folders {@link makeProcessDir} made in `parent` with `prefix` for this user's processes that are gone; returns how many. */
export function sweepProcessDirs(parent: string, prefix: string): number {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return 0;
  }
  let swept = 0;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
    if (!m || processAlive(Number(m[1]))) continue;
    const dir = join(parent, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory() || st.uid !== process.geteuid?.()) continue;
      rmSync(dir, { recursive: true, force: true });
      swept++;
    } catch {
      // gone meanwhile, or not all of it ours to remove: left
    }
  }
  return swept;
}

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

/**
 * How a folder and its contents are removed: by default `rmSync`, recursive. A caller whose folder
 * may hold mounts passes one that stays on the folder's file system (`rm -rf --one-file-system`).
 * It may throw: the folder then stays, for a later sweep.
 */
export type RemoveDir = (dir: string) => void;

const removeWhole: RemoveDir = (dir) => rmSync(dir, { recursive: true, force: true });

/** This process's folders, each with its removal: one exit handler for all of them (a handler each warned past ten). */
const ours = new Map<string, RemoveDir>();
/** The `<parent>\0<prefix>` pairs swept already by this process: those of processes gone are swept once, not at every folder made. */
const swept = new Set<string>();

function removeOurs(): void {
  for (const [dir, remove] of ours) {
    try {
      remove(dir);
    } catch {
      // what another user's program left in it: the folder stays, for a later sweep by a user who may
    }
  }
}

/** Makes `<parent>/<prefix><pid>-XXXXXX` (mode 0700), removed with its contents when this process exits, after sweeping those of processes gone ({@link sweepProcessDirs}) the first time `parent` and `prefix` are used. */
export function makeProcessDir(parent: string, prefix: string, remove: RemoveDir = removeWhole): string {
  const key = `${parent}\0${prefix}`;
  if (!swept.has(key)) {
    sweepProcessDirs(parent, prefix, remove);
    swept.add(key);
  }
  const dir = mkdtempSync(join(parent, `${prefix}${process.pid}-`));
  if (ours.size === 0) process.once('exit', removeOurs);
  ours.set(dir, remove);
  return dir;
}

/** Removes the folders {@link makeProcessDir} made in `parent` with `prefix` for this user's processes that are gone; returns how many. */
export function sweepProcessDirs(parent: string, prefix: string, remove: RemoveDir = removeWhole): number {
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
      remove(dir);
      swept++;
    } catch {
      // gone meanwhile, or not all of it ours to remove: left
    }
  }
  return swept;
}

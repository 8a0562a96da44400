import { appendFileSync, closeSync, existsSync, lstatSync, readFileSync, readlinkSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { shownBytes } from '@aalis/core';
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
 *
 * The commit (upper-commit.ts) adds first and removes after: every entry the command deleted goes
 * in a second pass, once every addition has landed, and a host entry the command replaced by one
 * of another type (a file by a folder) is renamed to `.aalis-replaced-*` beside it, journalled
 * before the rename, for the command's to take its place, and removed in the second pass. So what
 * a kill leaves is a duplicate at worst (a moved folder both where it was and, in part, where it
 * went), never a loss: the layer's rest is discarded, and nothing the host had is gone unless the
 * command's version of it landed. The sweep puts a replaced entry back where its name is still
 * free (the command's had not landed), and otherwise leaves it and says where.
 */

const COMMITTING = 'committing';
const COMMITTED = 'committed';
const TEMPS = 'commit-temps';

/** The journal's line of an entry of `hostDirFd`'s directory: by its path as bytes (hex), or unreachable. */
function dirLine(hostDirFd: number, fields: Record<string, string>): string {
  let dir: Buffer | undefined;
  try {
    dir = readlinkSync(`/proc/self/fd/${hostDirFd}`, { encoding: 'buffer' });
  } catch {
    // a directory past PATH_MAX has no path the kernel gives back: the temp is recorded as unreachable, and said at recovery
    dir = undefined;
  }
  return `${JSON.stringify({ ...(dir === undefined ? { unreachable: true } : { dirHex: dir.toString('hex') }), ...fields })}\n`;
}

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

/**
 * Records a temp before it is made in the host directory open at `hostDirFd`, by that directory's
 * path as bytes (hex): a path made of decoded names named another directory where a name was not
 * UTF-8, and the temp was never removed (found by an attack). `upper` is the overlay's upper layer
 * (`<layers>/<n>/upper`).
 */
export function recordTemp(upper: string, hostDirFd: number, name: string): void {
  appendFileSync(join(dirname(dirname(upper)), TEMPS), dirLine(hostDirFd, { name }), { mode: 0o600 });
}

/**
 * Records, before the rename, that the host entry `orig` of the directory open at `hostDirFd` is
 * renamed to `name` (`.aalis-replaced-*`) for the command's entry to take its place: a kill before
 * the second pass removed it leaves it there, and the next start puts it back or says it.
 */
export function recordAside(upper: string, hostDirFd: number, name: string, orig: Buffer): void {
  appendFileSync(join(dirname(dirname(upper)), TEMPS), dirLine(hostDirFd, { name, origHex: orig.toString('hex') }), { mode: 0o600 });
}

/**
 * For a dead daemon's layer folder: whether a commit had begun (then part of it may be on the host)
 * and the stray temps removed. A temp's directory is entered only if it is still the real path it
 * was (no symlink swapped in since), and only the exact recorded name is removed. A replaced host
 * entry kept aside ({@link recordAside}) is put back where its name is free, else left and named
 * in `left`: never removed here, as the command's entry that took its place may be partial.
 */
export function recoverCommit(layersDir: string): { state: CommitState; removed: number; left: string[] } {
  const state: CommitState = existsSync(join(layersDir, COMMITTED)) ? 'done' : existsSync(join(layersDir, COMMITTING)) ? 'partial' : 'none';
  let removed = 0;
  // temps that may still be there: said by the sweep, never claimed removed
  const left: string[] = [];
  let lines: string[] = [];
  try {
    lines = readFileSync(join(layersDir, TEMPS), 'utf8').split('\n').filter(Boolean);
  } catch {
    // no temps recorded
  }
  for (const line of lines) {
    let shown = line;
    try {
      const entry = JSON.parse(line) as { dirHex?: string; dir?: string; unreachable?: true; name: string; origHex?: string };
      if (entry.unreachable === true) {
        shown = `(a folder past PATH_MAX)/${entry.name}`;
        throw new Error('its directory lies past PATH_MAX');
      }
      const dir = entry.dirHex !== undefined ? Buffer.from(entry.dirHex, 'hex') : Buffer.from(entry.dir ?? '');
      shown = `${shownBytes(dir)}/${entry.name}`;
      const aside = entry.origHex !== undefined;
      if (!(aside ? /^\.aalis-replaced-[0-9a-f]{12}$/ : /^\.aalis-commit-[0-9a-f]{12}$/).test(entry.name)) continue;
      let real: Buffer;
      try {
        real = realpathSync.native(dir, { encoding: 'buffer' }); // the native one: the JS one decodes a Buffer path as text
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue; // its directory is gone, and the temp with it
        throw e;
      }
      if (!real.equals(dir)) continue; // a symlink swapped in since: not followed (a temp of ours is not there)
      const fd = openDir(dir);
      if (fd === undefined) continue;
      try {
        // what was opened, checked by its descriptor: a folder above swapped for a symlink between
        // the check above and the open led elsewhere (an entry of that name there is not ours)
        if (!readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' }).equals(dir)) continue;
        if (aside) {
          // a host entry the command replaced, its removal cut off: back in its place if that is
          // still free (the command's had not landed); else left beside it (a duplicate, never a loss), said
          if (lstatSync(`/proc/self/fd/${fd}/${entry.name}`, { throwIfNoEntry: false }) === undefined) continue;
          const orig = Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), Buffer.from(entry.origHex!, 'hex')]);
          if (lstatSync(orig, { throwIfNoEntry: false }) === undefined) renameSync(`/proc/self/fd/${fd}/${entry.name}`, orig);
          else left.push(`${shown} (the host's entry at ${shownBytes(Buffer.from(entry.origHex!, 'hex'))} the command replaced, kept)`);
        } else if (existsSync(`/proc/self/fd/${fd}/${entry.name}`)) {
          removeAt(fd, Buffer.from(entry.name));
          removed += 1;
        }
      } finally {
        closeSync(fd);
      }
    } catch {
      // could not be reached (a path past PATH_MAX, no permission): the temp may be there still
      left.push(shown);
    }
  }
  return { state, removed, left };
}

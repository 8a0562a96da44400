import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { aalisStateDir } from '@aalis/api-reach';
import { writeFileAtomic, processAlive } from '@aalis/core';
import { z } from 'zod';

const EntrySchema = z.object({
  v: z.literal(1),
  dataDir: z.string().min(2),
  /** `null` once the daemon stopped. */
  pid: z.number().int().positive().nullable(),
  port: z.number().int().min(1).max(65535),
  startedAt: z.string(),
});
/** A daemon as the registry records it. */
export type DaemonEntry = z.infer<typeof EntrySchema> & { readonly running: boolean };

/**
 * Where every daemon of this user notes its data directory and port:
 * `$XDG_STATE_HOME/aalis/daemons` (`~/.local/state/aalis/daemons`). Every command reads it, so a
 * sandboxed command never reads a daemon's data (its token among it) and never reaches its port,
 * whatever directory the command was started from.
 */
export function registryDir(env: NodeJS.ProcessEnv = process.env): string {
  // in the state folder the reach lists make control plane and hidden: no command rewrites it
  return join(aalisStateDir(env, homedir()), 'daemons');
}

function fileOf(dir: string, dataDir: string): string {
  return join(dir, `${createHash('sha256').update(dataDir).digest('hex').slice(0, 24)}.json`);
}


/**
 * Notes a running daemon; resolves to what removes the note at its stop. The entry of a data
 * directory is replaced by its next daemon; the entry of a daemon that died stays (its data is
 * still there). Entries are written through core's safe file layer: temp, fsync, rename, fsync of
 * the directory, never through a symlink.
 */
export async function registerDaemon(entry: { dataDir: string; port: number }, env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  const dir = registryDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A command that could write in the user's home before any daemon ran may have put a symlink
  // here: the registry's own directories must be real directories of this user.
  for (const path of [dirname(dir), dir]) {
    const stat = lstatSync(path);
    if (!stat.isDirectory() || (process.getuid !== undefined && stat.uid !== process.getuid())) {
      throw new Error(`${path} is not a directory of this user (a symlink, or somebody else's); remove it`);
    }
  }
  // The safe layer verifies each directory it opens is the judged real path; the home above may
  // be reached through a symlink, the two directories checked above may not.
  const file = fileOf(realpathSync.native(dir), entry.dataDir);
  const record = { v: 1, dataDir: entry.dataDir, pid: process.pid, port: entry.port, startedAt: new Date().toISOString() };
  const write = (value: object) => writeFileAtomic(file, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  await write(record);
  // At the stop the data directory is still there: the entry stays, without a pid, so later
  // commands keep it unreadable.
  return async () => {
    try {
      await write({ ...record, pid: null });
    } catch {
      // the registry went away: nothing to update
    }
  };
}

/**
 * The daemons the registry knows, running or not, whose data directory still exists; entries of
 * data directories that are gone are removed. An unreadable or malformed entry is skipped.
 */
export function knownDaemons(env: NodeJS.ProcessEnv = process.env): DaemonEntry[] {
  const dir = registryDir(env);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: DaemonEntry[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    let entry: z.infer<typeof EntrySchema>;
    try {
      entry = EntrySchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      continue;
    }
    if (!isAbsolute(entry.dataDir)) continue;
    try {
      if (!statSync(entry.dataDir).isDirectory()) continue;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') rmSync(file, { force: true });
      continue;
    }
    out.push({ ...entry, running: entry.pid !== null && processAlive(entry.pid) });
  }
  return out;
}

import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AalisError } from '@aalis/core';
import { z } from 'zod';

/** The lock's file in the data directory. */
export const LOCK_FILE = 'daemon.lock';

/**
 * What the lock names: the holder's pid and start time (to tell a reused id apart), and where
 * that pid means something: the boot (`/proc/sys/kernel/random/boot_id`) and the pid namespace
 * (its inode). Locks written before these two were added lack them, and are judged by pid alone.
 */
const HolderSchema = z.object({ pid: z.number().int().positive(), start: z.string().optional(), startedAt: z.string(), boot: z.string().optional(), pidns: z.number().optional() });
type Holder = z.infer<typeof HolderSchema>;

/** A second daemon refused on a data directory a running daemon already holds. */
export class DataDirInUseError extends AalisError<'data-dir-in-use'> {
  override readonly name = 'DataDirInUseError';
}

/** The start time of a process as /proc gives it (clock ticks after boot), to tell a reused id apart; `undefined` off Linux. */
function startOf(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** This boot's id, or undefined off Linux. */
function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The inode of this process's pid namespace, or undefined off Linux. */
function pidNamespace(): number | undefined {
  try {
    return statSync('/proc/self/ns/pid').ino;
  } catch {
    return undefined;
  }
}

/**
 * Whether the holder runs: `'elsewhere'` when its pid is one of another pid namespace of this
 * boot (a daemon in a container given the same data directory), which a pid here says nothing
 * about: looked up here it named another process or none, and a live lock was taken over.
 */
function running(holder: Holder): boolean | 'elsewhere' {
  const boot = bootId();
  // the machine restarted since: every process of that boot is gone
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false;
  const ns = pidNamespace();
  if (holder.pidns !== undefined && ns !== undefined && holder.pidns !== ns) return 'elsewhere';
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // the same id, started at another time: the holder died and its id was given to another process
  return holder.start === undefined || startOf(holder.pid) === undefined || startOf(holder.pid) === holder.start;
}

/** The holder a lock file names, or why it cannot be judged (not a regular file, not the lock's JSON). */
function holderOf(file: string): Holder | { unreadable: string } | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { unreadable: (error as Error).message };
  }
  if (!stat.isFile()) return { unreadable: 'it is not a regular file' };
  try {
    return HolderSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return { unreadable: 'it does not name a daemon' };
  }
}

function inUse(dataDir: string, holder: Holder): DataDirInUseError {
  return new DataDirInUseError(
    'data-dir-in-use',
    `another aalis daemon (pid ${holder.pid}, started ${holder.startedAt}) is running on the data directory ${dataDir}; two daemons on one data directory would share its token, its conversation index and its sandboxes (stopping one kills the other's commands), so this one did not start.`,
    { fix: `Use the running daemon, stop it first (kill ${holder.pid}), or give this one its own data directory (--data DIR or another --dir).` },
  );
}

function elsewhere(dataDir: string, file: string, holder: Holder): DataDirInUseError {
  return new DataDirInUseError(
    'data-dir-in-use',
    `the data directory ${dataDir} is held by an aalis daemon in another pid namespace (a container, say: pid ${holder.pid} there, started ${holder.startedAt}), whose process cannot be looked up from here, so whether it still runs is unknown and this daemon did not start.`,
    { fix: `Stop that daemon first, or give this one its own data directory (--data DIR or another --dir); if no daemon runs on ${dataDir} any more, remove ${file} and start again.` },
  );
}

/**
 * Takes the data directory for this daemon, or refuses with {@link DataDirInUseError} when a
 * running daemon holds it: the token, the conversation index, the sandboxes found by path under
 * the data directory at the stop, all assume one daemon. The lock is `<data>/daemon.lock`, made
 * whole under a temporary name and linked into place (a link never replaces a file or follows a
 * symlink there), naming this process's id and start time, the boot and the pid namespace. A
 * lock whose process is gone (a killed daemon, or any of an earlier boot) is taken over; one of
 * another pid namespace of this boot is refused (its pid cannot be looked up here). A stale lock
 * is renamed aside first, so of two daemons starting together only one takes it. Resolves to what gives the lock up at the stop.
 */
export function claimDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  const boot = bootId();
  const pidns = pidNamespace();
  const own: Holder = {
    pid: process.pid,
    ...(startOf(process.pid) !== undefined ? { start: startOf(process.pid) as string } : {}),
    startedAt: new Date().toISOString(),
    ...(boot !== undefined ? { boot } : {}),
    ...(pidns !== undefined ? { pidns } : {}),
  };
  const temp = join(dataDir, `${LOCK_FILE}.${process.pid}.${randomBytes(6).toString('hex')}`);
  writeFileSync(temp, `${JSON.stringify(own)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(temp, file);
        return () => release(file, own);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = holderOf(file);
      if (holder === undefined) continue; // given up meanwhile
      if ('unreadable' in holder) {
        throw new DataDirInUseError('data-dir-in-use', `the data directory ${dataDir} has a lock ${file} that cannot be judged (${holder.unreadable}), so this daemon did not start.`, {
          fix: `If no aalis daemon runs on ${dataDir}, remove ${file} and start again.`,
        });
      }
      const live = running(holder);
      if (live === 'elsewhere') throw elsewhere(dataDir, file, holder);
      if (live) throw inUse(dataDir, holder);
      // A dead daemon's lock: moved aside under a name of our own, then judged again there, so a
      // live lock another starting daemon linked in meanwhile is put back, not removed.
      const aside = `${temp}.stale`;
      try {
        renameSync(file, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const moved = holderOf(aside);
      const movedLive = moved !== undefined && !('unreadable' in moved) ? running(moved) : false;
      if (movedLive !== false) {
        try {
          linkSync(aside, file);
        } finally {
          unlinkSync(aside);
        }
        throw movedLive === 'elsewhere' ? elsewhere(dataDir, file, moved as Holder) : inUse(dataDir, moved as Holder);
      }
      unlinkSync(aside);
    }
    throw new DataDirInUseError('data-dir-in-use', `the data directory ${dataDir} was taken and given up by other daemons while this one started, so it did not start.`, { fix: 'Start it again once the other daemon is up or gone.' });
  } finally {
    unlinkSync(temp);
  }
}

/** Gives the lock up, if it is still this daemon's. */
function release(file: string, own: Holder): void {
  const holder = holderOf(file);
  if (holder === undefined || 'unreadable' in holder || holder.pid !== own.pid || holder.startedAt !== own.startedAt) return;
  try {
    unlinkSync(file);
  } catch {
    // gone already
  }
}

import { spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, fstatSync, ftruncateSync, lstatSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { AalisError, readRegularSync } from '@aalis/core';
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

/**
 * The holder a lock file names, or why it cannot be judged (not a regular file, not the lock's
 * JSON). Read through one descriptor (core's readRegularSync): `fd` when the caller holds the file
 * open, else one opened here without following a symlink and without waiting. A path checked by
 * lstat and then read by path could be a FIFO by the read, which blocked the start for good.
 */
function holderOf(file: string, fd?: number): Holder | { unreadable: string } | undefined {
  const read = readRegularSync(fd ?? file, { maxBytes: 64 * 1024 });
  if (read.kind === 'missing') return undefined;
  if (read.kind === 'refused' || read.kind === 'error') return { unreadable: read.why };
  try {
    return HolderSchema.parse(JSON.parse(read.bytes.toString('utf8')));
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

/** Exit status of the lock helper when another open file holds the lock (flock(1) `--conflict-exit-code`). */
const HELD = 75;

/**
 * The lock helpers, by absolute path first: PATH is the caller's (a root daemon started with a
 * user's PATH, or `node_modules/.bin` put first by a package script), and a `flock` found there
 * that exits 0 without locking would let two daemons run. A name on PATH is only the last resort,
 * where the system has neither at its usual place; the lock is checked either way ({@link takeLock}).
 */
const HELPERS: readonly { readonly paths: readonly string[]; readonly args: readonly string[] }[] = [
  { paths: ['/usr/bin/flock', '/bin/flock', 'flock'], args: ['--exclusive', '--nonblock', '--conflict-exit-code', String(HELD), '3'] },
  { paths: ['/usr/bin/perl', '/bin/perl', 'perl'], args: ['-MFcntl=:flock', '-e', `open(my $f, "+<&=", 3) or exit 2; flock($f, LOCK_EX | LOCK_NB) or exit ${HELD}; exit 0`] },
];

/** One helper, found. */
type Helper = { readonly command: string; readonly args: readonly string[] };

/** `helper` run on the open file `fd` (as its fd 3): its exit status, and what went wrong when it neither locked nor found the lock held. */
function tryWith(helper: Helper, fd: number): { status: number | null; error?: string } {
  // its own environment: nothing of the caller's (PERL5OPT, PERL5LIB, LD_PRELOAD) changes what it does
  const r = spawnSync(helper.command, helper.args, { stdio: ['ignore', 'ignore', 'pipe', fd], encoding: 'utf8', env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' } });
  if (r.error) return { status: null, error: r.error.message };
  return { status: r.status, ...(r.status !== 0 && r.status !== HELD ? { error: `exit ${r.status ?? r.signal}${r.stderr ? ` (${r.stderr.trim()})` : ''}` } : {}) };
}

/**
 * Takes a BSD lock (flock(2)) on the open file `fd`, without waiting; Node has no flock, so a helper
 * given the file as its fd 3 takes it and exits. The lock belongs to the open file, which stays open
 * here: it lasts as long as this process (the kernel drops it when the process dies, however it
 * dies), and a process that opens the file on its own cannot take it meanwhile. `flock(1)`
 * (util-linux), else perl's flock (macOS). A helper that says it locked is then asked for a second
 * open of the same file, which must be refused: one that does not lock (a stand-in, a file system
 * without locks) is found out there, and the daemon does not start. Throws when no helper can say.
 */
function takeLock(fd: number, file: string, dataDir: string): boolean {
  const tried: string[] = [];
  for (const { paths, args } of HELPERS) {
    const command = paths.find((p) => !p.startsWith('/') || existsSync(p));
    if (command === undefined) continue;
    const helper = { command, args };
    const first = tryWith(helper, fd);
    if (first.status === HELD) return false;
    if (first.status === 0) {
      const again = openSync(file, constants.O_RDWR | constants.O_NOFOLLOW);
      let second: ReturnType<typeof tryWith>;
      try {
        const [ours, other] = [fstatSync(fd), fstatSync(again)];
        // another file at the path now: the caller sees it too, and opens that one
        if (ours.ino !== other.ino || ours.dev !== other.dev) return true;
        second = tryWith(helper, again);
      } finally {
        closeSync(again); // an open file that holds no lock: closing it leaves ours
      }
      if (second.status === HELD) return true;
      tried.push(`${command} said it locked ${file}, but then let a second open of it take the same lock (${second.error ?? `exit ${second.status}`}): it does not lock`);
      break;
    }
    if (first.error !== undefined && /ENOENT/.test(first.error)) {
      tried.push(`${command}: not found`);
      continue;
    }
    tried.push(`${command}: ${first.error ?? `exit ${first.status}`}`);
    break;
  }
  throw new DataDirInUseError('data-dir-in-use', `the data directory ${dataDir}'s lock could not be taken (${tried.join('; ') || 'neither flock nor perl is installed'}), so whether another daemon runs on it is unknown and this daemon did not start.`, {
    fix: 'Install flock (util-linux) or perl at /usr/bin, or check that the data directory is on a file system that supports locks.',
  });
}

/** The holder as this process sees it: what `claimDataDir` writes into the lock. */
function ownHolder(): Holder {
  const boot = bootId();
  const pidns = pidNamespace();
  return {
    pid: process.pid,
    ...(startOf(process.pid) !== undefined ? { start: startOf(process.pid) as string } : {}),
    startedAt: new Date().toISOString(),
    ...(boot !== undefined ? { boot } : {}),
    ...(pidns !== undefined ? { pidns } : {}),
  };
}

/** The refusal for a lock another open file holds, naming the holder when its file says who (it may not have written it yet). */
function heldBy(dataDir: string, file: string): DataDirInUseError {
  const holder = holderOf(file);
  // the file names who wrote it last: the new holder writes it only after it locked, so a holder
  // that no longer runs (the killed one before it) says nothing about who holds the lock now
  if (holder === undefined || 'unreadable' in holder || running(holder) === false) {
    return new DataDirInUseError('data-dir-in-use', `another aalis daemon is starting on the data directory ${dataDir} (it holds ${file}), so this one did not start.`, {
      fix: 'Use that daemon once it is up, stop it first, or give this one its own data directory (--data DIR or another --dir).',
    });
  }
  const ns = pidNamespace();
  return holder.pidns !== undefined && ns !== undefined && holder.pidns !== ns ? elsewhere(dataDir, file, holder) : inUse(dataDir, holder);
}

/**
 * Takes the data directory for this daemon, or refuses with {@link DataDirInUseError} when a
 * running daemon holds it: the token, the conversation index, the sandboxes found by path under
 * the data directory at the stop, all assume one daemon. The lock is a kernel lock (flock) on
 * `<data>/daemon.lock`, held for the life of this process: the kernel lets exactly one process
 * hold it, in any pid namespace, and drops it when the holder dies (no stale lock to judge, so no
 * take-over to race: it used to be renamed aside and judged, and of three daemons started together
 * two could run). The file names the holder (pid and start time, boot, pid namespace) for the
 * refusal's message; one that names a daemon of an older version, which did not lock it and still
 * runs here, is refused too. Resolves to what gives the lock up at the stop.
 */
export function claimDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new DataDirInUseError('data-dir-in-use', `the data directory ${dataDir} has a lock ${file} that cannot be opened (${code === 'ELOOP' ? 'it is a symlink' : (code ?? (error as Error).message)}), so this daemon did not start.`, {
        fix: `If no aalis daemon runs on ${dataDir}, remove ${file} and start again.`,
      });
    }
    let keep = false;
    try {
      const opened = fstatSync(fd);
      if (opened.nlink === 0) continue; // removed by a holder's stop since it was opened: open the new one
      // a second name for it (a hard link) would be another file this daemon truncates and writes
      const odd = !opened.isFile() ? 'is not a regular file' : opened.nlink !== 1 ? `has ${opened.nlink} names (hard links): another file would be overwritten` : undefined;
      if (odd !== undefined) throw new DataDirInUseError('data-dir-in-use', `the data directory ${dataDir} has a lock ${file} that ${odd}, so this daemon did not start.`, { fix: `If no aalis daemon runs on ${dataDir}, remove ${file} and start again.` });
      if (!takeLock(fd, file, dataDir)) throw heldBy(dataDir, file);
      // The file locked must still be the one at the path: a holder that stopped meanwhile removed
      // it, and a lock on a removed file would let the next daemon lock a new one beside this.
      const here = lstatSync(file, { throwIfNoEntry: false });
      const mine = fstatSync(fd);
      if (here === undefined || here.ino !== mine.ino || here.dev !== mine.dev) continue;
      const before = holderOf(file, fd);
      // a daemon of an older version holds the directory by the file alone, without a kernel lock
      if (before !== undefined && !('unreadable' in before) && running(before) === true && before.pid !== process.pid) throw inUse(dataDir, before);
      const own = ownHolder();
      const bytes = Buffer.from(`${JSON.stringify(own)}\n`);
      ftruncateSync(fd, 0);
      writeSync(fd, bytes, 0, bytes.length, 0);
      keep = true;
      return () => release(file, fd);
    } finally {
      if (!keep) closeSync(fd);
    }
  }
  throw new DataDirInUseError('data-dir-in-use', `the data directory ${dataDir} was taken and given up by other daemons while this one started, so it did not start.`, { fix: 'Start it again once the other daemon is up or gone.' });
}

/** Gives the lock up: the file is removed while still locked (a daemon that opened it meanwhile sees it gone and opens the new one), then closed. */
function release(file: string, fd: number): void {
  try {
    // only while the path still leads to our file (written by us alone: no other holder can write it while we lock it)
    const here = lstatSync(file, { throwIfNoEntry: false });
    const mine = fstatSync(fd);
    if (here !== undefined && here.ino === mine.ino && here.dev === mine.dev) unlinkSync(file);
  } catch {
    // gone already
  } finally {
    try {
      closeSync(fd);
    } catch {
      // closed already (a second release)
    }
  }
}

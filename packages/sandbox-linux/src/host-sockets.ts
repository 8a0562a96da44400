import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isWithin } from './rule-match.js';

/**
 * Where daemons put their sockets (the FHS runtime directory; `/var/run` is a link to it on every
 * current distribution, and a desktop session's `/run/user/<uid>` is inside it). Hidden whole in
 * the sandbox, so a socket bound there later, or renamed there after `bind`, is covered by
 * construction, whatever its name. `/tmp` (X11, tmux, ssh-agent forwarding) is the session temp
 * or private in the sandbox: the host's is not there at all.
 */
export const SOCKET_HOMES = ['/run', '/var/run'] as const;

/** A socket home as found on this host: its real path, and the top-level symlinks it holds (recreated inside, see translate.ts). */
export interface SocketHome {
  readonly path: string;
  /** `[name, target]` of each symlink directly in it (NixOS keeps `/run/current-system` there). */
  readonly symlinks: readonly (readonly [string, string])[];
}

/** What the host's unix sockets require of the sandbox. */
export interface HostSocketFacts {
  /** Bound pathname sockets outside the socket homes whose listed name is a socket now (real paths): hidden one by one. */
  readonly sockets: readonly string[];
  /** The socket homes that exist, hidden whole. */
  readonly socketHomes?: readonly SocketHome[];
  /**
   * Directories of sockets that are not at the name they were bound with (renamed or moved after
   * `bind`, or a second socket bound at that name since): the socket is somewhere else, most
   * likely beside it, so the directory is hidden whole (where the policy lets it be).
   */
  readonly socketDirs?: readonly string[];
  /** Listed sockets that could not be placed at all (a relative name no visible process holds, a name that is not UTF-8 in a directory that is not either): reported with every run. */
  readonly unplacedSockets?: readonly string[];
  /** Network namespaces whose socket lists were read. */
  readonly netnsRead?: number;
}

/**
 * One `/proc/<pid>/net/unix` per network namespace this process can see: the host's, a
 * container's, one made by `unshare -n`. A socket's path is a file like any other, so one bound
 * in another network namespace is reachable by path from the sandbox. Namespaces of processes we
 * may not inspect (another user's, when the daemon is not root) cannot be read.
 */
export function unixSocketLists(): { lists: string[]; netns: number } {
  const seen = new Set<string>();
  const lists: string[] = [];
  const read = (path: string) => {
    try {
      lists.push(readFileSync(path, 'latin1')); // names are bytes: kept as they are, checked below
    } catch {
      // the process ended meanwhile
    }
  };
  // a stat of the ns link is a quarter cheaper than reading it (about 20 µs a process here); its inode
  // names the namespace. A process that ended (a zombie: it has no namespaces) is ENOENT, answered
  // without an exception: those cost several times the stat, and an init that reaps late keeps dozens.
  const nsOf = (pid: string) => {
    const st = statSync(`/proc/${pid}/ns/net`, { throwIfNoEntry: false });
    return st === undefined ? undefined : `${st.dev}:${st.ino}`;
  };
  try {
    const own = nsOf('self');
    if (own !== undefined) seen.add(own);
  } catch {
    // no ns link: the list below is the only one
  }
  try {
    lists.push(readFileSync('/proc/self/net/unix', 'latin1'));
  } catch (e) {
    // without the list, sockets outside unixSockets cannot be hidden: refuse rather than guess
    throw new Error(`cannot list the host's unix sockets (/proc/self/net/unix): ${(e as Error).message}`);
  }
  for (const pid of readdirSync('/proc')) {
    if (pid.charCodeAt(0) > 57 || pid.charCodeAt(0) < 49) continue; // not a pid
    let ns: string | undefined;
    try {
      ns = nsOf(pid);
    } catch {
      continue; // not ours to inspect
    }
    if (ns === undefined || seen.has(ns)) continue; // gone (or a zombie)
    seen.add(ns);
    read(`/proc/${pid}/net/unix`);
  }
  return { lists, netns: seen.size };
}

/** A listed name decoded: UTF-8 when it is, otherwise undefined (such a name cannot be given to bwrap). */
function decodeName(raw: string): string | undefined {
  const bytes = Buffer.from(raw, 'latin1');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

/** A bound pathname socket as `/proc/net/unix` lists it: its name (raw bytes as latin1) and its socket inode. */
export interface ListedSocket {
  readonly raw: string;
  readonly inode: string;
  /** Unconnected (a listening or bound socket: its own name), not an accepted connection, which shows its listener's name. */
  readonly bound: boolean;
}

/** The pathname sockets of a `/proc/net/unix` text (abstract ones, `@…`, are per network namespace: out of the sandbox's reach). */
export function listedSockets(list: string): ListedSocket[] {
  const out: ListedSocket[] = [];
  for (const line of list.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode [Path]: the path is everything after the seventh field
    const m = /^\s*\S+:\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\d+) (.+)$/.exec(line);
    if (!m || m[3]!.startsWith('@')) continue;
    out.push({ bound: m[1] === '01', inode: m[2]!, raw: m[3]! });
  }
  return out;
}

/**
 * The current directories of the processes holding the given socket inodes (`/proc/<pid>/fd`
 * links read `socket:[<inode>]`): where a socket bound by a relative name most likely is. Read
 * only when such a socket is listed: it costs a look at every open file of every process.
 */
export function holderCwds(inodes: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pid of readdirSync('/proc')) {
    if (pid.charCodeAt(0) > 57 || pid.charCodeAt(0) < 49) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const ino = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (!ino || !inodes.has(ino)) continue;
      try {
        out.set(ino, [...(out.get(ino) ?? []), realpathSync.native(`/proc/${pid}/cwd`)]);
      } catch {
        // gone
      }
    }
  }
  return out;
}

/** The socket homes present here, as real paths (a `/var/run` that links to `/run` is the same one). */
export function socketHomes(): SocketHome[] {
  const out = new Map<string, SocketHome>();
  for (const home of SOCKET_HOMES) {
    let real: string;
    try {
      real = realpathSync.native(home);
      if (!lstatSync(real).isDirectory()) continue;
    } catch {
      continue;
    }
    if (out.has(real)) continue;
    const symlinks: [string, string][] = [];
    try {
      for (const e of readdirSync(real, { withFileTypes: true })) {
        if (e.isSymbolicLink()) symlinks.push([e.name, readlinkSync(`${real}/${e.name}`)]);
      }
    } catch {
      // unreadable: hidden all the same, nothing put back
    }
    out.set(real, { path: real, symlinks });
  }
  return [...out.values()];
}

/**
 * Every pathname socket listed in any network namespace we can read, sorted by what it is now:
 * inside a socket home (nothing more to do), a socket at its listed name (hidden one by one),
 * not a socket there any more while its socket is alive (renamed or moved after `bind`, or the
 * name reused: its directory is hidden; a name that is not UTF-8: its directory), or one that cannot be placed (relative and unheld:
 * reported). `/proc/net/unix`'s inode column is the socket's own (sockfs) inode, not the bound
 * file's, so it cannot confirm that the file at a name is that socket; a name two unconnected
 * sockets are listed with shows one no longer there, and is treated as moved.
 */
export function hostSocketFacts(): HostSocketFacts {
  const homes = socketHomes();
  const { lists, netns } = unixSocketLists();
  const listed = listedNames(lists, netns);
  const count = listed.count;
  const unplaced = new Set(listed.unplaced);
  const sockets = new Set<string>();
  const dirs = new Set<string>();
  for (const [raw, n] of count) {
    const name = decodeName(raw);
    if (name === undefined) {
      // bwrap takes its arguments as text: such a name cannot be mounted over, its directory can
      const dir = decodeName(raw.slice(0, raw.lastIndexOf('/')) || '/');
      let realDir: string | undefined;
      try {
        realDir = dir?.startsWith('/') ? realpathSync.native(dir) : undefined;
      } catch {
        realDir = undefined;
      }
      if (realDir !== undefined && realDir !== '/') {
        if (!homes.some((h) => isWithin(realDir!, h.path))) dirs.add(realDir);
      } else unplaced.add(`${Buffer.from(raw, 'latin1').toString('utf8')} (not UTF-8)`);
      continue;
    }
    let real: string | undefined;
    let isSocket = false;
    try {
      // bigint: a plain lstat of a socket misleads node's next module resolution (nodejs/node#51142)
      const st = lstatSync(name, { throwIfNoEntry: false, bigint: true });
      isSocket = st?.isSocket() ?? false;
      real = realpathSync.native(isSocket ? name : dirname(name));
    } catch {
      real = undefined; // its directory is gone too: nothing left to reach it by
    }
    if (real === undefined) continue;
    if (homes.some((h) => isWithin(real!, h.path))) continue;
    if (isSocket) sockets.add(real);
    if (!isSocket || n > 1) dirs.add(isSocket ? dirname(real) : real);
  }
  return { sockets: [...sockets].sort(), socketHomes: homes, socketDirs: [...dirs].sort(), unplacedSockets: [...unplaced].sort(), netnsRead: netns };
}

/** The names the lists give (with how many unconnected sockets each), and the sockets that cannot be placed. */
export interface ListedNames {
  readonly count: ReadonlyMap<string, number>;
  readonly unplaced: readonly string[];
}

/**
 * The last lists read and the names they gave, per thread. Reused while every list reads the same,
 * byte for byte: procfs gives these files no modification time, so the change is detected by
 * comparing what each run reads anyway (one read per network namespace). A socket bound, closed,
 * connected or accepted since changes a list (its line, or its state), and a namespace made or
 * gone since changes the count: either way the names are worked out again. What a name is now
 * (a socket still, its real path) is looked at on every run, never kept.
 */
let lastListed: { readonly key: string; readonly names: ListedNames } | undefined;

/** {@link ListedNames} of the lists, from the cache above when they read as last time (the same object then). */
export function listedNames(lists: readonly string[], netns: number): ListedNames {
  const key = `${netns}\n${lists.join('\0')}`;
  if (lastListed?.key === key) return lastListed.names;
  const count = new Map<string, number>();
  const relative: ListedSocket[] = [];
  for (const list of lists) {
    for (const l of listedSockets(list)) {
      // an accepted connection shows its listener's name: it counts as a name, not as a second socket
      if (l.raw.startsWith('/')) count.set(l.raw, (count.get(l.raw) ?? 0) + (l.bound ? 1 : 0));
      else if (l.bound) relative.push(l);
    }
  }
  const unplaced: string[] = [];
  if (relative.length > 0) {
    // a relative name was resolved against the binder's directory then; its directory now is the best
    // guess. The costly part (every open file of every process): kept with the lists, as above.
    const cwds = holderCwds(new Set(relative.map((l) => l.inode)));
    for (const l of relative) {
      const found = cwds.get(l.inode) ?? [];
      if (found.length === 0) unplaced.push(`${Buffer.from(l.raw, 'latin1').toString('utf8')} (relative, no process holds it that we can see)`);
      // the name joined to each holder's directory: a socket there is hidden, and that directory anyway
      for (const cwd of found) count.set(Buffer.from(`${cwd}/${l.raw.replace(/^\.\//, '')}`, 'utf8').toString('latin1'), 2);
    }
  }
  const names = { count, unplaced };
  lastListed = { key, names };
  return names;
}


/** Bound pathname unix sockets of every network namespace we can read, as real paths (those in socket homes included). */
export function hostSockets(): string[] {
  const out = new Set<string>();
  for (const list of unixSocketLists().lists) {
    for (const { raw } of listedSockets(list)) {
      const name = decodeName(raw);
      if (!name?.startsWith('/')) continue;
      try {
        if (lstatSync(name, { throwIfNoEntry: false, bigint: true })?.isSocket()) out.add(realpathSync.native(name));
      } catch {
        // unreachable from here: nothing to hide
      }
    }
  }
  return [...out];
}

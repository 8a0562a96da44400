import { lstatSync } from 'node:fs';
import { dirname } from 'node:path';
import type { HostFacts } from './scan.js';

/**
 * Whether a command mapped off the host's uid 0 (root-map.ts) can search every directory above
 * `path`. Through the idmapped mounts it owns what the host's uid 0 owns and has the host's gid 0
 * as its group; every other owner it meets as "other". `false` only when a directory above is
 * surely closed to it (not owned by uid 0, no search bit for its group or for others); anything
 * unsure (unreadable, uid 0, gone) is `true`, so the caller keeps hiding what is there.
 */
export function reachableAsMappedRoot(path: string, seen = new Map<string, boolean>()): boolean {
  const dirs: string[] = [];
  for (let d = dirname(path); ; d = dirname(d)) {
    dirs.unshift(d);
    if (d === '/' || d === '.') break;
  }
  for (const d of dirs) {
    let open = seen.get(d);
    if (open === undefined) {
      const st = lstatSync(d, { throwIfNoEntry: false });
      open = st === undefined || !st.isDirectory() || st.uid === 0 || (st.gid === 0 && (st.mode & 0o010) !== 0) || (st.mode & 0o001) !== 0;
      seen.set(d, open);
    }
    if (!open) return false;
  }
  return true;
}

/**
 * The host facts as a root-mapped command meets them: host sockets it cannot reach (another user's
 * private directory holds them) are not hidden. They need no hiding, and bwrap, with the command's
 * ids, cannot make their mount points: it refused the whole run ("Can't mkdir parents for …:
 * Permission denied") whenever another user's private directory held a listening socket.
 */
export function factsForMappedRoot(facts: HostFacts): HostFacts {
  const seen = new Map<string, boolean>();
  const sockets = facts.sockets.filter((p) => reachableAsMappedRoot(p, seen));
  const socketDirs = facts.socketDirs?.filter((d) => reachableAsMappedRoot(`${d}/.`, seen));
  if (sockets.length === facts.sockets.length && socketDirs?.length === facts.socketDirs?.length) return facts;
  return { ...facts, sockets, ...(socketDirs !== undefined ? { socketDirs } : {}) };
}

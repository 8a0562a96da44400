import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { decodeHostPath, hostPathArg } from './host-names.js';

/*
 * The names a symlink is resolved through. A landing that is a symlink (`.git/hooks/pre-commit ->
 * ../../scripts/pre-commit.sh`) is judged by its own name, but every directory and symlink on the
 * way, and where it ends, decide what runs: a write that replaces one of them, or makes the
 * missing target, moves the landing onto a file of the writer's (found by an attack on the
 * sandbox's commit). The sandbox's commit and the host-side file tools both protect these names.
 */

/** How many symlinks the kernel follows in one lookup (MAXSYMLINKS). */
const MAX_LINKS = 40;

/** What resolving a symlink passes through: each directory and symlink on the way, and where it ends (there or not). */
export interface LinkChain {
  readonly through: readonly string[];
  readonly target: string | undefined;
}

function parts(path: string): string[] {
  return path.split('/').filter((p) => p !== '' && p !== '.');
}

/**
 * What the kernel passes through to resolve `path` from the real directory `from` (a relative
 * path from there, or an absolute one): one name at a time, `..` from the directory actually
 * reached (never collapsed as text: `lnk/../x` with `lnk -> deep/dir` is `deep/x`; found by an
 * attack), each symlink followed where it is met. The first missing name is on the way too
 * (made a symlink, it would send the rest elsewhere); the rest is where it ends once made.
 */
export function resolutionOf(from: string, path: string, hopsBefore = 0): LinkChain {
  const through: string[] = [];
  let pending = parts(path);
  let cur = isAbsolute(path) ? '/' : from;
  for (let hops = hopsBefore; pending.length > 0; ) {
    const name = pending.shift()!;
    if (name === '..') {
      cur = dirname(cur);
      continue;
    }
    const next = cur === '/' ? `/${name}` : `${cur}/${name}`;
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(hostPathArg(next));
    } catch {
      st = undefined; // missing (or closed to the daemon): the way leads here, once made
    }
    if (st === undefined) {
      through.push(next);
      // what follows cannot be looked up: `..` past a name not there yet is taken as text
      return { through, target: resolve(next, ...pending) };
    }
    if (st.isSymbolicLink()) {
      through.push(next);
      if (++hops > MAX_LINKS) return { through, target: undefined };
      // by its bytes, each name as the walks name it: a target not UTF-8 read as text named no file (h115)
      const to = decodeHostPath(readlinkSync(hostPathArg(next), { encoding: 'buffer' }));
      pending = [...parts(to), ...pending];
      if (isAbsolute(to)) cur = '/';
      continue;
    }
    if (pending.length === 0) return { through, target: next };
    through.push(next);
    cur = next;
  }
  return { through, target: cur };
}

/**
 * The names the kernel looks up to resolve the symlink at `link` (absolute), past the link itself,
 * from the real directory holding it. Without a target past {@link MAX_LINKS} links (a loop).
 */
export function linkChainOf(link: string): LinkChain {
  let from: string;
  try {
    from = decodeHostPath(realpathSync.native(hostPathArg(dirname(link)), { encoding: 'buffer' }));
  } catch {
    from = dirname(link);
  }
  return resolutionOf(from, decodeHostPath(readlinkSync(hostPathArg(link), { encoding: 'buffer' })), 1);
}

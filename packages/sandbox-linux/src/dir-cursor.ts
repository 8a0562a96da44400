import { closeSync } from 'node:fs';
import { type DirId, idOf, namesIn, upTo } from '@aalis/core';

/*
 * Walks of any depth with a fixed number of open descriptors. A walk keeps one descriptor per
 * side open (the directory it is in), goes down by name relative to it (O_NOFOLLOW) and comes
 * back up through `..`, checking that the directory it reaches is the one it left (same device and
 * inode): a directory moved meanwhile is never mistaken for its old parent. The stack of names
 * lives on the heap, so depth is bounded by memory, not by the call stack (about 5,500 levels of
 * recursion) or by the descriptor limit (20,000 here).
 */

// the primitives of a walk by descriptors are core's (fd-tree.ts): one mechanism, used by both backends
export { type DirId, DirMovedError, idOf, namesIn, upTo } from '@aalis/core';

/** What to do with one entry of a tree walk: go into it (a directory), nothing more, or end the walk with `false`. */
export type Visit = 'descend' | 'leaf' | 'stop';

/**
 * Walks the tree at `name` (in the directory open at `fd`) depth first, iteratively. `visit` is
 * called for every entry, the top one first, with the directory it is in; `open` opens a
 * directory to go into (undefined: not one after all). `empty` hears of each directory with no
 * entries. Returns false when a visit said `stop`. `fd` itself is never closed.
 */
export function walkTree(
  fd: number,
  name: Buffer,
  path: string,
  child: (dir: string, name: Buffer) => string,
  visit: (dirFd: number, name: Buffer, path: string) => Visit,
  open: (dirFd: number, name: Buffer) => number | undefined,
  empty?: (path: string) => void,
): boolean {
  const first = visit(fd, name, path);
  if (first !== 'descend') return first !== 'stop';
  let cur = open(fd, name);
  if (cur === undefined) return true;
  const ids: DirId[] = [idOf(fd)];
  const frames: { path: string; names: Buffer[]; i: number }[] = [];
  try {
    frames.push({ path, names: namesIn(cur), i: 0 });
    if (frames[0]!.names.length === 0) empty?.(path);
    while (frames.length > 0) {
      const top = frames.at(-1)!;
      if (top.i === top.names.length) {
        frames.pop();
        const parent = ids.pop()!;
        if (frames.length === 0) break;
        cur = upTo(cur, parent);
        continue;
      }
      const n = top.names[top.i++]!;
      const p = child(top.path, n);
      const v = visit(cur, n, p);
      if (v === 'stop') return false;
      if (v === 'leaf') continue;
      const d = open(cur, n);
      if (d === undefined) continue;
      let names: Buffer[];
      try {
        names = namesIn(d);
        ids.push(idOf(cur));
      } catch (e) {
        closeSync(d);
        throw e;
      }
      closeSync(cur);
      cur = d;
      frames.push({ path: p, names, i: 0 });
      if (names.length === 0) empty?.(p);
    }
    return true;
  } finally {
    closeSync(cur);
  }
}

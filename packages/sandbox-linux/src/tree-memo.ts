import type { FoundEntry } from './scan.js';

/** What a walk of a subtree produced, in order: a match, or a directory it could not list. */
export type MemoEffect = { readonly found: FoundEntry } | { readonly unreadable: string };

interface Memo {
  /** The index generation the walk that made it started at (see tree-index.ts). */
  readonly gen: number;
  readonly effects: readonly MemoEffect[];
  /** Entries the walk counted in the subtree. */
  readonly visited: number;
}

const EMPTY: readonly MemoEffect[] = [];

/** Directories one memo keeps at most; past that it starts again. */
const MAX_MEMOS = 400_000;

/** The hooks a walk of one tree takes (host-walk's `reuse`, `entered`, `left`) and the scan's outputs through it. */
export interface MemoRecorder {
  found(entry: FoundEntry): void;
  unreadable(path: string): void;
  /** What the directory being walked now holds must not be remembered (another run's placeholder, a matching symlink). */
  volatile(): void;
  reuse(path: string): number | undefined;
  entered(path: string): void;
  left(path: string, visited: number): void;
}

/**
 * The scan's results per directory of a tree walked whole, for one policy: every subtree's matches
 * and unreadable directories. A subtree the index says nothing happened in since its memo was made
 * is not walked again; its effects are replayed (and recorded in its parents' memos) instead. A
 * subtree holding a matching symlink (its target is looked up every time) or another run's
 * placeholder is not remembered.
 */
export class TreeMemo {
  private readonly map = new Map<string, Memo>();

  /** The generation of `path`'s memo, if it has one. */
  genOf(path: string): number | undefined {
    return this.map.get(path)?.gen;
  }

  /** Directories remembered. */
  get size(): number {
    return this.map.size;
  }

  /**
   * A recorder for one walk started at generation `gen`: `trusted(path)` says whether the memo of
   * `path` still holds; `add` and `unreadable` are the scan's own outputs.
   */
  recorder(gen: number, trusted: (path: string) => boolean, add: (f: FoundEntry) => void, unreadable: (path: string) => void): MemoRecorder {
    const log: MemoEffect[] = [];
    const frames: { path: string; start: number; volatile: boolean }[] = [];
    const rec: MemoRecorder = {
      found: (entry) => {
        log.push({ found: entry });
        add(entry);
      },
      unreadable: (path) => {
        log.push({ unreadable: path });
        unreadable(path);
        add({ path, kind: 'dir', hide: true });
      },
      volatile: () => {
        const top = frames[frames.length - 1];
        if (top) top.volatile = true;
      },
      reuse: (path) => {
        const m = this.map.get(path);
        if (!m || !trusted(path)) return undefined;
        reusedSubtrees += 1;
        for (const e of m.effects) {
          if ('found' in e) rec.found(e.found);
          else rec.unreadable(e.unreadable);
        }
        return m.visited;
      },
      entered: (path) => {
        frames.push({ path, start: log.length, volatile: false });
      },
      left: (path, visited) => {
        const f = frames.pop();
        if (!f) return;
        if (f.volatile) {
          const parent = frames[frames.length - 1];
          if (parent) parent.volatile = true;
          this.map.delete(path);
          return;
        }
        if (this.map.size >= MAX_MEMOS && !this.map.has(path)) this.map.clear();
        this.map.set(path, { gen, effects: log.length === f.start ? EMPTY : log.slice(f.start), visited });
      },
    };
    return rec;
  }
}

const memos = new Map<string, TreeMemo>();
let reusedSubtrees = 0;

/** Subtrees this thread's scans have not walked since it started, their memo replayed instead. */
export function reusedSubtreeCount(): number {
  return reusedSubtrees;
}

/** This thread's {@link TreeMemo} for a policy (its JSON and the walks' roots); a few are kept, the oldest goes first. */
export function treeMemoFor(key: string): TreeMemo {
  let m = memos.get(key);
  if (!m) {
    if (memos.size >= 4) memos.delete(memos.keys().next().value!);
    m = new TreeMemo();
    memos.set(key, m);
  }
  return m;
}

/** Directories remembered over all this thread's memos (for the memory report). */
export function memoDirectories(): number {
  let n = 0;
  for (const m of memos.values()) n += m.size;
  return n;
}

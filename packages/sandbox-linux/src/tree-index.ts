import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { decodeName, encodePath } from '@aalis/core';
import { findPython } from './system-interpreters.js';
import { isWithin } from './rule-match.js';
import { TREE_WATCH_PY } from './tree-watch.helper.js';

/** File systems whose inotify events are complete: a change made by another machine (NFS, FUSE, 9p) raises none. */
const LOCAL_FS = new Set(['ext2', 'ext3', 'ext4', 'xfs', 'btrfs', 'tmpfs', 'f2fs']);

/** How long a sync may take before the index is given up (the walks then read every directory again). */
const SYNC_TIMEOUT_MS = 10_000;

/**
 * Entries a tree must have for the index to be used for it: below this a walk costs less than a
 * sync with the helper (a round trip to another process, 2 to 40 ms on a loaded machine), and a
 * sync's wait would slow the looks' pace (they pause 50 times what a look costs) for nothing.
 */
export const INDEX_MIN_ENTRIES = 20_000;

/** Past this many directories remembered as changed, everything before is forgotten (and not trusted). */
const MAX_REMEMBERED = 500_000;

type RootState =
  | { readonly state: 'pending'; readonly mounts: string }
  | { readonly state: 'watched'; readonly mounts: string }
  | { readonly state: 'ready'; readonly mounts: string; readonly since: number }
  | { readonly state: 'failed'; readonly why: string };

interface Synced {
  readonly changed: readonly string[];
  readonly replaced: readonly string[];
  readonly overflow: boolean;
  readonly lost: readonly string[];
}

/**
 * Which directories of the trees walked whole have changed, so that a walk can skip a subtree
 * nothing happened in (tree-walk memo in scan.ts, the look in landing-sweeper.ts). Kept by an inotify
 * helper process (tree-watch.helper.ts) watching every directory of each tree; each
 * {@link TreeIndex.sync} is a barrier (every change made before it is in its answer) and starts a
 * new generation. A subtree is trusted as unchanged since generation `g` only when its tree was
 * fully watched before `g`, no event was lost since (queue overflow), the mount table is what it
 * was, and no directory in it, nor any of its ancestors in the tree, was reported since. Anything
 * else (no python3, no inotify watches left, a file system whose events are incomplete, the helper
 * gone or slow) means "changed", and the walks read every directory as before: slower, never wrong.
 */
export class TreeIndex {
  private child?: ChildProcess;
  private dead = false;
  private gen = 0;
  private lastSync?: number;
  private epoch = 0;
  private readonly roots = new Map<string, RootState>();
  /** Directory → generation of the last change in its subtree (propagated to its ancestors). */
  private readonly subtreeAt = new Map<string, number>();
  /** Directory → generation it was last created, deleted or moved. */
  private readonly replacedAt = new Map<string, number>();
  private readonly waiting = new Map<number, (s: Synced) => void>();
  private nextId = 1;
  private buffer = '';

  private constructor(python: string) {
    const child = spawn(python, ['-I', '-S', '-c', TREE_WATCH_PY], { stdio: ['pipe', 'pipe', 'ignore'], env: {} });
    child.on('error', () => this.die());
    child.on('exit', () => this.die());
    child.stdin!.on('error', () => this.die());
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => this.receive(d));
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    this.child = child;
  }

  /** An index, or undefined where there is no python3 to keep one. */
  static start(): TreeIndex | undefined {
    const python = findPython();
    return python ? new TreeIndex(python) : undefined;
  }

  private die(): void {
    this.dead = true;
    this.child = undefined;
    for (const w of this.waiting.values()) w({ changed: [], replaced: [], overflow: true, lost: [] });
    this.waiting.clear();
  }

  private receive(data: string): void {
    this.buffer += data;
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop()!;
    for (const line of lines) {
      const msg = JSON.parse(line) as { op: string; root?: string; ok?: boolean; why?: string; id?: number } & Partial<Synced>;
      if (msg.op === 'watched' && msg.root) {
        const root = decodeName(Buffer.from(msg.root, 'hex'));
        const was = this.roots.get(root);
        if (was?.state !== 'pending') continue;
        this.roots.set(root, msg.ok ? { state: 'watched', mounts: was.mounts } : { state: 'failed', why: msg.why ?? 'failed' });
      } else if (msg.op === 'synced' && msg.id !== undefined) {
        const hex = (xs: readonly string[] | undefined) => (xs ?? []).map((h) => decodeName(Buffer.from(h, 'hex')));
        this.waiting.get(msg.id)?.({ changed: hex(msg.changed), replaced: hex(msg.replaced), overflow: msg.overflow ?? true, lost: hex(msg.lost) });
        this.waiting.delete(msg.id);
      } else if (msg.op === 'fatal') this.child?.kill();
    }
  }

  private send(msg: object): void {
    this.child?.stdin?.write(`${JSON.stringify(msg)}\n`);
  }

  /** Starts watching a tree (in the background; it is trusted from the first sync after it is fully watched). */
  watch(root: string): void {
    if (this.dead || this.roots.has(root)) return;
    const mounts = mountsOf(root, this.mountTable());
    if (mounts === undefined) {
      this.roots.set(root, { state: 'failed', why: 'a file system under it does not report every change' });
      return;
    }
    this.roots.set(root, { state: 'pending', mounts });
    this.send({ op: 'watch', root: encodePath(root).toString('hex') });
  }

  private mountTable(): string {
    try {
      return readFileSync('/proc/self/mountinfo', 'utf8');
    } catch {
      return '';
    }
  }

  /** The generation of the last {@link sync}, if it succeeded: what a walk done now records. */
  get synced(): number | undefined {
    return this.lastSync;
  }

  /** Makes the next walks go without the index (until the next {@link sync}): they read every directory. */
  forget(): void {
    this.lastSync = undefined;
  }

  /** Brings the index up to now (every change made before the call is in it) and starts a new generation; undefined when the index cannot be trusted. */
  async sync(): Promise<number | undefined> {
    this.lastSync = undefined;
    if (this.dead || !this.child) return undefined;
    const id = this.nextId++;
    const answer = await new Promise<Synced | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        this.child?.kill(); // too slow to be waited for: walk as before from now on
        resolve(undefined);
      }, SYNC_TIMEOUT_MS);
      this.waiting.set(id, (s) => {
        clearTimeout(timer);
        resolve(s);
      });
      this.send({ op: 'sync', id });
    });
    if (!answer || this.dead) return undefined;
    const gen = ++this.gen;
    if (answer.overflow || this.subtreeAt.size > MAX_REMEMBERED) {
      this.epoch = gen; // events were lost: nothing before this generation is trusted
      this.subtreeAt.clear();
      this.replacedAt.clear();
    }
    // a mount made (or removed) inside a tree hides directories from their watches: that tree is watched afresh
    const table = this.mountTable();
    for (const [r, s] of this.roots) if (s.state !== 'failed' && mountsOf(r, table) !== s.mounts) this.roots.delete(r);
    for (const r of answer.lost) this.roots.delete(r); // watched again at the next walk
    for (const p of answer.changed) this.touch(p, gen);
    for (const p of answer.replaced) {
      this.replacedAt.set(p, gen);
      this.touch(p, gen);
    }
    for (const [r, s] of this.roots) if (s.state === 'watched') this.roots.set(r, { state: 'ready', mounts: s.mounts, since: gen });
    this.lastSync = gen;
    return gen;
  }

  private touch(path: string, gen: number): void {
    for (let p = path; ; p = p.slice(0, p.lastIndexOf('/')) || '/') {
      this.subtreeAt.set(p, gen);
      if (p === '/' || this.roots.has(p)) return;
    }
  }

  /** Whether nothing under `dir` (a directory of a watched tree) can have changed since generation `since`. */
  unchangedSince(dir: string, since: number): boolean {
    if (this.dead || this.epoch > since || this.lastSync === undefined) return false;
    const root = this.rootOf(dir);
    const state = root === undefined ? undefined : this.roots.get(root);
    if (state?.state !== 'ready' || state.since > since) return false;
    if ((this.subtreeAt.get(dir) ?? 0) > since) return false;
    for (let p = dir; ; p = p.slice(0, p.lastIndexOf('/')) || '/') {
      if ((this.replacedAt.get(p) ?? 0) > since) return false;
      if (p === root || p === '/') return true;
    }
  }

  private rootOf(dir: string): string | undefined {
    for (const r of this.roots.keys()) if (dir === r || dir.startsWith(r === '/' ? '/' : `${r}/`)) return r;
    return undefined;
  }

  /** Whether `root` is a tree the index watches whole and trusts. */
  isReady(root: string): boolean {
    return !this.dead && this.roots.get(root)?.state === 'ready';
  }

  /** How many trees are fully watched and trusted. */
  get readyTrees(): number {
    let n = 0;
    for (const s of this.roots.values()) if (s.state === 'ready') n += 1;
    return n;
  }

  /** Why a tree is not indexed, or undefined when it is (or is being) watched. */
  whyNot(root: string): string | undefined {
    if (this.dead) return 'the index helper is not running';
    const s = this.roots.get(root);
    return s?.state === 'failed' ? s.why : undefined;
  }

  /** Stops the helper. */
  close(): void {
    this.child?.kill();
  }
}

/**
 * The mounts at or under `root` and the one holding it (id, point, type), as a signature to see
 * them change; undefined when one of them is not a local file system whose events are complete.
 */
function mountsOf(root: string, mountinfo: string): string | undefined {
  const out: string[] = [];
  let holder = '';
  let holderLine = '';
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const fields = before.split(' ');
    const point = fields[4]!.replace(/\\040/g, ' ');
    const type = after.split(' ')[0]!;
    const id = `${fields[0]} ${point} ${type}`;
    if (isWithin(point, root)) {
      if (!LOCAL_FS.has(type)) return undefined;
      out.push(id);
    } else if (isWithin(root, point) && point.length >= holder.length) {
      holder = point;
      holderLine = id;
    }
  }
  if (!LOCAL_FS.has(holderLine.split(' ').pop() ?? '')) return undefined;
  return [holderLine, ...out].join('\n');
}

let index: TreeIndex | undefined | null = null;

/** This thread's index: started on the host thread (host-thread.worker.ts), absent elsewhere. */
export function treeIndex(): TreeIndex | undefined {
  return index ?? undefined;
}

/** Starts this thread's index (once). */
export function startTreeIndex(): TreeIndex | undefined {
  if (index === null) index = TreeIndex.start();
  return index;
}

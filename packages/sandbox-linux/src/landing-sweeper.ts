import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { encodePath } from '@aalis/core';
import type { HostThread } from './host-thread.js';
import { listingCacheFor, walkTree } from './host-walk.js';
import { policyEvaluatorOf } from './policy-evaluator.js';
import { treeIndex } from './tree-index.js';
import { isWithin, ruleSet } from './rule-match.js';
import { dirId, liesUnder, moveAt, removeAt } from './safe-move.js';
import { type HostFacts, isToolchainCache, type ScanOptions } from './scan.js';

/** What the look after a run found: the entries it took away, and whether it could look at all. */
export interface UndoReport {
  readonly removed: readonly string[];
  /** Where they were moved (their whole path under it), when anything was. */
  readonly movedTo?: string;
  /** Each entry moved aside and where it is now (a subset of `removed`). */
  readonly moved?: readonly { readonly path: string; readonly to: string }[];
  /** Entries that could not be moved aside and were deleted instead. */
  readonly deleted?: readonly string[];
  /** Directories under the writable roots the look could not list: what is in them was not checked. */
  readonly unreadable?: readonly string[];
  /** Set when the roots could not be walked again: nothing more was removed then. */
  readonly skipped?: string;
}

/** The writable roots a look walks: every write root but the toolchain caches, nested ones once. */
export function lookRoots(policy: SandboxPolicy): string[] {
  const all = [...new Set(policy.write)].filter((r) => !isToolchainCache(r)).sort();
  return all.filter((r) => !all.some((o) => o !== r && isWithin(r, o)));
}

/**
 * Mounts can only protect what exists when the sandbox starts, and the placeholders only the
 * names on the command's own path. A new entry elsewhere under a writable root that a deny layer
 * covers (a `.envrc` or `.vscode/tasks.json` in a subdirectory, a `.env` the tool layer never
 * writes) is found by walking the writable roots again after the run and taken away, and reported
 * as a refused write: undone, not prevented, which the README says plainly.
 *
 * The walk is host-walk's: it never follows a symlink, and every entry is moved relative to the
 * open directory that was listed (checked first to still lie under a writable root), so a
 * directory swapped for a symlink mid-look leads nowhere, and nothing outside the writable roots
 * is ever moved or deleted. Any name, any depth.
 */
export function undoNewForbidden(
  policy: SandboxPolicy,
  before: HostFacts,
  options: ScanOptions | undefined,
  keep: ReadonlySet<string> = new Set(),
  asideDir?: string,
): UndoReport {
  // a folder the command can write in could hold its symlinks: moving there would put the
  // command's landing wherever they point, as the daemon
  const aside = asideDir !== undefined && !reachableBy(policy, asideDir) ? asideDir : undefined;
  const patterns = [...policy.readDeny, ...policy.writeDeny, ...policy.writeExceptions, ...policy.controlDeny]
    .flatMap((r) => [r, ...(r.except ?? [])])
    .flatMap((m) => ('pattern' in m ? [{ pattern: m.pattern }] : []));
  if (patterns.length === 0) return { removed: [] };
  const any = ruleSet(patterns);
  // the scan's listings: only directories that changed since are read again
  const cache = options?.noCache ? undefined : listingCacheFor(JSON.stringify(patterns), (path) => any.covers(path));
  const evaluator = policyEvaluatorOf(policy);
  const existed = new Set<string>([...before.kinds.keys()]);
  for (const f of before.found) existed.add(f.via ?? f.path);
  for (const p of before.matched ?? []) existed.add(p); // also those grouped into a directory hidden whole
  for (const p of before.dangling ?? []) existed.add(p);
  for (const p of keep) existed.add(p);
  const removed: string[] = [];
  const deleted: string[] = [];
  const moved: { path: string; to: string }[] = [];
  const unreadable: string[] = [];
  const roots = lookRoots(policy);
  const index = options?.noCache ? undefined : treeIndex();
  try {
    for (const root of roots) {
      const rootId = dirId(root);
      walkTree(root, {
        // a subtree the tree index says nothing happened in since the scan holds nothing new
        reuse: (path) => (index && before.indexGen !== undefined && index.unchangedSince(path, before.indexGen) ? 0 : undefined),
        unreadable: (path) => unreadable.push(path),
        entry: (e) => {
          const hit = any.covers(e.path);
          if (hit && !existed.has(e.path) && !evaluator.writable(e.path)) {
            // the directory listed is the one open at dirFd; if a host program moved it out of the
            // writable roots meanwhile, its entries are not ours to touch
            if (!liesUnder(e.dirFd, e.depth - 1, rootId)) return false;
            const to = aside === undefined ? undefined : moveAside(e.dirFd, e.name, e.path, aside);
            if (to === undefined) {
              removeAt(e.dirFd, e.name);
              deleted.push(e.path);
            } else moved.push({ path: e.path, to });
            removed.push(e.path);
            return false;
          }
          return e.type === 'dir' && !(hit && evaluator.hidden(e.path));
        },
      }, Number.POSITIVE_INFINITY, cache);
    }
  } catch (e) {
    return report(removed, deleted, moved, unreadable, aside, (e as Error).message);
  }
  return report(removed, deleted, moved, unreadable, aside);
}

/** Whether `path` (or the real path of its nearest existing ancestor) lies under a write root. */
function reachableBy(policy: SandboxPolicy, path: string): boolean {
  let p = path;
  let rest = '';
  for (;;) {
    try {
      const real = realpathSync.native(p) + rest;
      return policy.write.some((r) => isWithin(path, r) || isWithin(real, r));
    } catch {
      if (p === '/') return true;
      rest = p.slice(p.lastIndexOf('/')) + rest;
      p = p.slice(0, p.lastIndexOf('/')) || '/';
    }
  }
}

function report(removed: string[], deleted: string[], moved: { path: string; to: string }[], unreadable: string[], aside: string | undefined, skipped?: string): UndoReport {
  return {
    removed,
    ...(moved.length > 0 && aside ? { movedTo: aside, moved } : {}),
    ...(deleted.length > 0 ? { deleted } : {}),
    ...(unreadable.length > 0 ? { unreadable } : {}),
    ...(skipped === undefined ? {} : { skipped }),
  };
}

let longNames = 0;

/**
 * Moves an undone entry out of the way rather than deleting it: a host program (the user's editor)
 * may have made it during the run, and nothing of theirs may be lost. It goes under `aside` with
 * its whole path; a path too long for that goes to `aside/long/<n>-<name>`. Answers where it went,
 * or undefined when it could not be moved; the caller deletes it then (a landing never stays).
 */
function moveAside(dirFd: number, name: Buffer, path: string, aside: string): string | undefined {
  try {
    const dest = join(aside, path);
    try {
      mkdirSync(encodePath(dirname(dest)), { recursive: true, mode: 0o700 });
      moveAt(dirFd, name, encodePath(dest));
      return dest;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw e;
      const long = join(aside, 'long');
      mkdirSync(long, { recursive: true, mode: 0o700 });
      longNames += 1;
      const prefix = `${long}/${longNames}-`;
      moveAt(dirFd, name, Buffer.concat([encodePath(prefix), name]));
      return prefix + name.toString('utf8'); // a name that is not UTF-8 reads with U+FFFD, as every path a run reports
    }
  } catch {
    return undefined;
  }
}

/**
 * The look of {@link undoNewForbidden}, repeated while a command runs, so that a long command (a
 * dev server, a watcher in the background) cannot keep a landing in place for its whole life: the
 * next look removes it. The pause between looks grows with what a look costs (at least 50 times
 * as long), so a large workspace is not walked over and over. The looks run on the sandbox's host
 * thread (host-thread.ts), off the daemon's event loop, when one is given.
 */
export class LandingSweeper {
  private readonly removed = new Set<string>();
  private readonly deleted = new Set<string>();
  private readonly moved = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private inFlight?: Promise<UndoReport>;

  constructor(
    private readonly policy: SandboxPolicy,
    private readonly before: HostFacts,
    private readonly options: ScanOptions | undefined,
    private readonly everyMs: number,
    /** The placeholders of the runs going on when it looks: removing one on the host would lift its mount in the sandbox. */
    private readonly keep: () => ReadonlySet<string>,
    /** This run's folder for what is moved aside. */
    private readonly aside?: string,
    /** Where the looks run; on the calling thread without one. */
    private readonly thread?: HostThread,
  ) {}

  /** Starts looking every `everyMs` (nothing happens for a non-positive interval). */
  start(): void {
    if (this.everyMs > 0) this.schedule(this.everyMs);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(async () => {
      const t = performance.now();
      const report = await this.look();
      if (!this.stopped && report.skipped === undefined) this.schedule(Math.max(this.everyMs, 50 * (performance.now() - t)));
    }, ms);
    this.timer.unref();
  }

  private look(): Promise<UndoReport> {
    const keep = [...this.keep()];
    const job = this.thread
      ? this.thread.run({ op: 'look', policy: this.policy, before: this.before, options: this.options, keep, aside: this.aside })
      : Promise.resolve().then(() => undoNewForbidden(this.policy, this.before, this.options, new Set(keep), this.aside));
    this.inFlight = job.then(
      (report) => {
        for (const p of report.removed) this.removed.add(p);
        for (const p of report.deleted ?? []) this.deleted.add(p);
        for (const m of report.moved ?? []) this.moved.set(m.path, m.to);
        return report;
      },
      // the command may be writing in what is being removed: the next look, or the last, takes it
      (e: Error) => ({ removed: [], skipped: e.message }),
    );
    return this.inFlight;
  }

  /** Stops the looks and takes the last one, after the command has ended: everything removed, or why it could not look. */
  async finish(): Promise<UndoReport> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight; // a look under way finishes first: two never walk at once
    const last = await this.look();
    const removed = [...this.removed].sort();
    return {
      removed,
      ...(this.moved.size > 0 && this.aside ? { movedTo: this.aside, moved: [...this.moved].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, to]) => ({ path, to })) } : {}),
      ...(this.deleted.size > 0 ? { deleted: [...this.deleted].sort() } : {}),
      ...(last.unreadable && last.unreadable.length > 0 ? { unreadable: last.unreadable } : {}),
      ...(last.skipped === undefined ? {} : { skipped: last.skipped }),
    };
  }
}

import { cpSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { layersOf } from './layers.js';
import { isWithin } from './rule-match.js';
import { type FoundEntry, findPatternMatches, type HostFacts, type ScanOptions } from './scan.js';

/** What the look after a run found: the entries it took away, and whether it could look at all. */
export interface UndoReport {
  readonly removed: readonly string[];
  /** Where they were moved (their whole path under it), when anything was. */
  readonly movedTo?: string;
  /** Entries that could not be moved aside and were deleted instead. */
  readonly deleted?: readonly string[];
  /** Set when the roots could not be walked again (the limit): nothing was removed then. */
  readonly skipped?: string;
}

/**
 * Mounts can only protect what exists when the sandbox starts, and the placeholders only the
 * names on the command's own path. A new entry elsewhere under a writable root that a deny layer
 * covers (a `.envrc` or `.vscode/tasks.json` in a subdirectory, a `.env` the tool layer never
 * writes) is found by walking the same roots again after the run and removed, and reported as a
 * refused write: undone, not prevented, which the README says plainly.
 */
export function undoNewForbidden(
  policy: SandboxPolicy,
  before: HostFacts,
  options: ScanOptions | undefined,
  keep: ReadonlySet<string> = new Set(),
  aside?: string,
): UndoReport {
  const layers = layersOf(policy);
  const existed = new Set<string>([...before.kinds.keys()]);
  for (const f of before.found) existed.add(f.via ?? f.path);
  for (const p of keep) existed.add(p);
  let after: { found: readonly FoundEntry[] };
  try {
    after = findPatternMatches(policy, options);
  } catch (e) {
    return { removed: [], skipped: (e as Error).message };
  }
  const removed: string[] = [];
  const deleted: string[] = [];
  const entries = after.found.map((f) => f.via ?? f.path).sort();
  for (const path of entries) {
    if (existed.has(path) || removed.some((r) => isWithin(path, r))) continue;
    if (!policy.write.some((root) => isWithin(path, root)) || layers.writable(path)) continue;
    if (!aside || !moveAside(path, join(aside, path))) {
      rmSync(path, { recursive: true, force: true });
      deleted.push(path);
    }
    removed.push(path);
  }
  const moved = removed.length > deleted.length;
  return { removed, ...(moved && aside ? { movedTo: aside } : {}), ...(deleted.length > 0 ? { deleted } : {}) };
}

/**
 * Moves an undone entry out of the way rather than deleting it: a host program (the user's editor)
 * may have made it during the run, and nothing of theirs may be lost. Across file systems it is
 * copied, then removed. False when it could not be moved; the caller deletes it then (a landing
 * never stays).
 */
function moveAside(path: string, dest: string): boolean {
  try {
    mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
    try {
      renameSync(path, dest);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      cpSync(path, dest, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
      rmSync(path, { recursive: true, force: true });
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The look of {@link undoNewForbidden}, repeated while a command runs, so that a long command (a
 * dev server, a watcher in the background) cannot keep a landing in place for its whole life: the
 * next look removes it. The pause between looks grows with what a look costs (at least 50 times
 * as long), so a large workspace is not walked over and over.
 */
export class LandingSweeper {
  private readonly removed = new Set<string>();
  private readonly deleted = new Set<string>();
  private moved = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly policy: SandboxPolicy,
    private readonly before: HostFacts,
    private readonly options: ScanOptions | undefined,
    private readonly everyMs: number,
    /** The placeholders of the runs going on when it looks: removing one on the host would lift its mount in the sandbox. */
    private readonly keep: () => ReadonlySet<string>,
    /** This run's folder for what is moved aside. */
    private readonly aside?: string,
  ) {}

  /** Starts looking every `everyMs` (nothing happens for a non-positive interval). */
  start(): void {
    if (this.everyMs > 0) this.schedule(this.everyMs);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      const t = performance.now();
      const report = this.look();
      if (!this.stopped && report.skipped === undefined) this.schedule(Math.max(this.everyMs, 50 * (performance.now() - t)));
    }, ms);
    this.timer.unref();
  }

  private look(): UndoReport {
    try {
      const report = undoNewForbidden(this.policy, this.before, this.options, this.keep(), this.aside);
      for (const p of report.removed) this.removed.add(p);
      for (const p of report.deleted ?? []) this.deleted.add(p);
      if (report.movedTo) this.moved = true;
      return report;
    } catch (e) {
      // the command may be writing in what is being removed: the next look, or the last, takes it
      return { removed: [], skipped: (e as Error).message };
    }
  }

  /** Stops the looks and takes the last one, after the command has ended: everything removed, or why it could not look. */
  finish(): UndoReport {
    this.stopped = true;
    clearTimeout(this.timer);
    const last = this.look();
    const removed = [...this.removed].sort();
    return {
      removed,
      ...(this.moved && this.aside ? { movedTo: this.aside } : {}),
      ...(this.deleted.size > 0 ? { deleted: [...this.deleted].sort() } : {}),
      ...(last.skipped === undefined ? {} : { skipped: last.skipped }),
    };
  }
}

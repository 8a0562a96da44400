import { processAlive } from '@aalis/core';
import { execFile } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { chmod, lstat, readdir, rm, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { recoverCommit } from './commit-journal.js';
import { removeLayers } from './overlay-mount.js';
import type { Placeholder } from './translate.js';

/** The file in a run folder of a sandbox prepared ahead whose command has not started (see {@link RunDir.markPrepared}). */
const PREPARED_MARK = 'prepared';

/*
 * A run's host-side leftovers live in one folder, `<tmp>/aalis-sbx-<pid>-<n>`: the empty file
 * mounted over hidden files, and a journal of the placeholder directories created in writable roots. The
 * journal is written before each placeholder is created, so a crash of the daemon mid-run leaves a
 * complete list; the next sandbox started on the machine sweeps folders whose pid is gone.
 */

const PREFIX = 'aalis-sbx-';
let counter = 0;

/**
 * Placeholders of this process's runs now going on, with how many runs rely on each. Two runs in
 * one workspace (a dev server in the background, a command beside it) share a placeholder: the
 * scan of the second sees it as missing (see {@link livePlaceholders}), so the second plans the
 * same placeholder and takes a share of it. Removing it on the host when the first run ends would
 * lift the second run's mount (the kernel detaches a mount whose directory is removed in another
 * namespace), so the last run relying on it removes it.
 */
const live = new Map<string, number>();

/**
 * Placeholders no run relies on any more that could not be removed: another run's placeholder is
 * inside (a run whose scan was posted before this placeholder was made took it for a real
 * directory, `.git` say, and placed its own under it). Removed once what is inside is; until then
 * ours, so the next run that plans the same placeholder takes it over instead of failing on it.
 */
const orphans = new Set<string>();

/** The placeholders of this process's runs now going on: to the host scan they are not there, and no look for landings may remove them. */
export function livePlaceholders(): ReadonlySet<string> {
  return new Set([...live.keys(), ...orphans]);
}

/** The host-side state of one run. */
export class RunDir {
  readonly path: string;
  private created = false;
  private journal = false;
  private empty = false;
  private void = false;
  private layers = false;
  private kept = false;
  private fifos = false;
  private prepared = false;
  private readonly placeholders: Placeholder[] = [];

  constructor(readonly parent: string) {
    counter += 1;
    this.path = join(parent, `${PREFIX}${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`);
  }

  /** The empty file for hidden files and sockets. */
  get emptyFile(): string {
    return join(this.path, 'empty');
  }

  /** The empty directory mounted at placeholders. */
  get emptyDir(): string {
    return join(this.path, 'void');
  }

  /**
   * Keeps the layers (and so this folder) past {@link dispose}: a run's refused writes wait in them
   * for an answer (kept-writes.ts). {@link releaseLayers} removes them; a dead daemon's are swept.
   */
  keepLayers(): void {
    this.kept = this.layers;
  }

  /**
   * Removes kept layers and the folder, synchronously: kept layers are rare (a run waiting for an
   * answer), and a discard or close must leave nothing behind when it returns.
   */
  releaseLayers(): void {
    if (!this.kept) return;
    this.kept = false;
    if (!this.created) return;
    this.created = this.layers = false;
    try {
      removeLayers(join(this.path, 'overlay'));
      rmdirSync(this.path);
    } catch {
      // what could not be removed stays, for the sweep at the next start
    }
  }

  /** Creates the folder and its empty directory. */
  prepareEmptyDir(): void {
    if (this.void) return;
    this.ensure();
    mkdirSync(this.emptyDir, { mode: 0o555 });
    this.void = true;
  }

  /**
   * Where this run's overlay layers go (`overlay-mount.ts`), made now. Removed with the folder: what
   * the command wrote and was not committed goes with it; a killed daemon's are swept unjudged.
   */
  prepareLayersDir(): string {
    this.ensure();
    const dir = join(this.path, 'overlay');
    mkdirSync(dir, { mode: 0o700 });
    this.layers = true;
    return dir;
  }

  /**
   * Marks the folder as a sandbox prepared ahead (prepared.ts) whose command has not started: a
   * daemon killed meanwhile leaves layers nothing wrote to, which its sweep removes without saying
   * writes were lost. {@link released} takes the mark away before the command is handed over.
   */
  markPrepared(): void {
    this.ensure();
    closeSync(openSync(join(this.path, PREPARED_MARK), 'wx', 0o400));
    this.prepared = true;
  }

  /** The prepared sandbox's command is about to start: from here its folder holds a run's writes. */
  released(): void {
    if (!this.prepared) return;
    unlinkSync(join(this.path, PREPARED_MARK));
    this.prepared = false;
  }

  /** Where the launcher makes this run's FIFOs (launcher.ts), made now (0700, inside the run's own 0700 folder). */
  prepareFifoDir(): string {
    const dir = join(this.path, 'fifo');
    if (this.fifos) return dir; // made already: the launcher was asked for the FIFOs while the scan ran
    this.ensure();
    mkdirSync(dir, { mode: 0o700 });
    this.fifos = true;
    return dir;
  }

  private ensure(): void {
    if (this.created) return;
    mkdirSync(this.path, { mode: 0o700 });
    this.created = true;
  }

  /** Creates the folder and its empty file. */
  prepareEmptyFile(): void {
    if (this.empty) return;
    this.ensure();
    closeSync(openSync(this.emptyFile, 'wx', 0o444));
    this.empty = true;
  }

  /**
   * Creates the placeholders (empty directories), journalled first (one write for all); throws if
   * something appeared at one of them since the scan, so the run does not go ahead on a stale plan.
   */
  addPlaceholders(list: readonly Placeholder[]): void {
    if (list.length === 0) return;
    this.ensure();
    appendFileSync(join(this.path, 'journal'), list.map((p) => `${JSON.stringify(p)}\n`).join(''));
    this.journal = true;
    for (const p of list) {
      const shared = live.get(p.path);
      // 0555: a host program cannot drop a file into it while the run lasts either
      if (shared === undefined && !orphans.delete(p.path)) mkdirSync(p.path, { mode: 0o555 });
      live.set(p.path, (shared ?? 0) + 1);
      this.placeholders.push(p);
    }
  }

  /**
   * Removes every placeholder now (only while still empty: what someone else put there stays),
   * then the folder, off the event loop: an overlay run's folder holds three or more directories per
   * writable root, and removing them one synchronous call after another stalled every other call
   * of the daemon. Placeholders stay synchronous: another run may take a share of one the moment
   * this one lets it go, and a removal still in flight would then lift that run's mount.
   * Resolves once the folder is gone, or left for the sweep of the next start when what the
   * command left in it cannot all be removed. Calling it again is a no-op.
   */
  async dispose(): Promise<void> {
    for (const p of this.placeholders.reverse()) {
      const n = (live.get(p.path) ?? 1) - 1;
      if (n > 0) {
        live.set(p.path, n);
        continue;
      }
      live.delete(p.path);
      if (!removePlaceholder(p)) {
        orphans.add(p.path);
        continue;
      }
      // deepest first, so a chain of them goes at once
      for (const o of [...orphans].sort((x, y) => y.length - x.length)) if (p.path.startsWith(`${o}/`) && removePlaceholder({ path: o })) orphans.delete(o);
    }
    this.placeholders.length = 0;
    if (!this.created) return;
    const made = { empty: this.empty, void: this.void, journal: this.journal, layers: this.layers && !this.kept, fifos: this.fifos, prepared: this.prepared };
    this.empty = this.void = this.journal = this.fifos = this.prepared = false;
    // kept layers wait for releaseLayers, and the folder with them
    if (!this.kept) this.created = this.layers = false;
    // only what this object put there, so no recursive delete outside the layers
    const parts: Promise<unknown>[] = [];
    if (made.empty) parts.push(unlink(this.emptyFile));
    if (made.void) parts.push(rmdir(this.emptyDir));
    if (made.journal) parts.push(unlink(join(this.path, 'journal')));
    if (made.prepared) parts.push(unlink(join(this.path, PREPARED_MARK)));
    if (made.layers) parts.push(removeLayersOffLoop(join(this.path, 'overlay')));
    if (made.fifos) parts.push(rm(join(this.path, 'fifo'), { recursive: true, force: true }));
    const settled = await Promise.allSettled(parts);
    // what the command left could not all be removed: the folder stays, for the sweep at the next start
    if (settled.some((r) => r.status === 'rejected') || this.kept) return;
    await rmdir(this.path).catch(() => {});
  }
}

/**
 * {@link removeLayers} without blocking the event loop: every directory made listable (the
 * overlay's work directory is mode 000), by bytes so a name that is not UTF-8 is reached too, then
 * removed by the thread pool; where that fails (a path past PATH_MAX, a name the string API
 * cannot give back), rm(1), which walks relative to each directory.
 */
async function removeLayersOffLoop(dir: string): Promise<void> {
  try {
    await makeListable(Buffer.from(dir));
    await rm(dir, { recursive: true, force: true });
  } catch {
    await new Promise<void>((resolve, reject) => execFile('rm', ['-rf', '--', dir], { env: { PATH: '/usr/bin:/bin' } }, (e) => (e ? reject(e) : resolve())));
  }
}

async function makeListable(p: Buffer): Promise<void> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(p);
  } catch {
    return;
  }
  if (!st.isDirectory()) return;
  if ((st.mode & 0o700) !== 0o700) await chmod(p, 0o700);
  const names = await readdir(p, { encoding: 'buffer' });
  await Promise.all(names.map((n) => makeListable(Buffer.concat([p, Buffer.from('/'), n]))));
}

/** Removes a placeholder if it is still empty; false when it is still there (something is inside). */
function removePlaceholder(p: Placeholder): boolean {
  try {
    const st = lstatSync(p.path);
    if (st.isDirectory()) rmdirSync(p.path); // only an empty one goes
    else if (st.isFile() && st.size === 0) unlinkSync(p.path); // journals of older versions had file placeholders
    return true;
  } catch (e) {
    // gone already: done; no longer empty: not ours to delete
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}


/**
 * Removes the run folders (and their journalled placeholders) of processes that are gone. Returns
 * how many. `unjudged` hears of each folder that held overlay layers: the writes of a run whose
 * daemon died, never judged, so never committed (removed here with the folder).
 */
export function sweepStaleRunDirs(parent: string, unjudged?: (dir: string, partial: boolean, tempsLeft: readonly string[]) => void): number {
  let swept = 0;
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    const dir = join(parent, name);
    // only this user's own, made as RunDir makes them (a folder, closed to others): the parent is
    // shared (`/tmp`), and another user's folder there, named for a dead pid, had its journal's
    // paths removed and its layers reported as this user's lost writes (found by a review)
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory() || st.uid !== process.geteuid?.() || (st.mode & 0o077) !== 0) continue;
    try {
      const journal = readFileSync(join(dir, 'journal'), 'utf8');
      const entries = journal
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Placeholder);
      for (const p of entries.reverse()) removePlaceholder(p);
    } catch {
      // no journal: nothing was placed
    }
    try {
      const layers = join(dir, 'overlay');
      if (existsSync(layers)) {
        const commit = recoverCommit(layers); // a commit cut off midway: its temps removed, said as partial (commit-journal.ts)
        // layers whose run never stamped its start (markRunStart, just before its command starts) hold
        // no writes: a cold run makes them while its scan runs, and a daemon killed then ran nothing
        const started = existsSync(join(layers, 'started'));
        removeLayers(layers); // its work directory is mode 000
        // a sandbox prepared ahead whose command never started: nothing was written, nothing to say
        const preparedOnly = existsSync(join(dir, PREPARED_MARK));
        if (!preparedOnly && (commit.state === 'partial' || (commit.state === 'none' && started))) unjudged?.(dir, commit.state === 'partial', commit.left);
      }
      rmSync(dir, { recursive: true, force: true });
      swept += 1;
    } catch {
      // another user's folder: theirs to sweep
    }
  }
  return swept;
}

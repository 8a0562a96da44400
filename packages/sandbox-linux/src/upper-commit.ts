import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, copyFileSync, constants, fchmodSync, fchownSync, fsyncSync, lchownSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, renameSync, type Stats, symlinkSync, unlinkSync } from 'node:fs';
import type { SandboxPolicy } from '@aalis/api-reach';
import { decodeName, encodePath, GIT_DIR_MARK_NAMES, shownBytes, takenForGitDir } from '@aalis/core';
import { copyAt, copySparse } from './copy-tree.js';
import { atFd, openDir } from './host-walk.js';
import { type OverlayXattrs, readOverlayXattrs, renameKeepsNoXattr } from './overlay-xattrs.js';
import { recordAside, recordTemp } from './commit-journal.js';
import { basename, dirname, join } from 'node:path';
import { CommitConflict, changedSince, conflictNote, dirChangedSince, type HostSide, mountAtOrUnder, readMountinfo, type Since, sameAsHost, treeChangedSince } from './commit-conflicts.js';
import { PROBE_CHILD, policyEvaluatorOf } from './policy-evaluator.js';
import { newRepositoryVerdict } from './new-repository.js';
import { type NewWorktrees, newWorktrees } from './new-worktree.js';
import { isWithin } from './rule-match.js';
import { isOpaqueAt, type OpaqueDirs, readOpaqueDirs } from './opaque-dirs.js';
import type { OverlayRoot } from './overlay-mount.js';
import { removeAt } from './safe-move.js';
import { type DirId, idOf, upTo, walkTree } from './dir-cursor.js';

/*
 * After the command has ended (exit, timeout, kill: its whole pid namespace is gone, so nothing
 * writes the upper layer any more), each entry of the upper layer is judged by the layers the
 * sandbox's mounts come from (policy-evaluator.ts: write roots, writeDeny with the landings table and
 * `.env*`, writeExceptions with the node_modules exception, controlDeny) and only the allowed ones
 * are committed. Only the upper layer is walked: the cost is that of what the command wrote.
 *
 * Both sides are reached by descriptors, never by a path from the root: the upper layer's
 * directories and the host's are opened relative to their parent's open descriptor with
 * O_NOFOLLOW (host-walk's openDir), so a host directory a program swapped for a symlink during the
 * run is not entered (its part is refused and said), and any name or depth works. A file is
 * committed by rename(2) from the upper layer (same file system) or by a copy to a fresh name in
 * the host directory, fsync, then rename: either way the host name gets a new inode, so a file
 * hard-linked to a protected one is never written in place. A symlink is committed as a symlink.
 */

/** What a commit did. Paths are host paths, names decoded as the walk decodes them. */
export interface CommitReport {
  /** Entries written, replaced or removed on the host. */
  readonly committed: readonly string[];
  /** Entries the policy refused: not on the host. */
  readonly refused: readonly string[];
  /** Entries that changed on the host during the run: the host's version was kept (commit-conflicts.ts). */
  readonly conflicts: readonly string[];
  /** Where the command's version of a conflicting file was kept (under the `aside` folder), by host path. */
  readonly keptAt: Readonly<Record<string, string>>;
  /** Entries the policy allows that could not be committed (an I/O error, a vanished directory): not on the host. */
  readonly failed: readonly string[];
  /** Lines for the command's stderr: what was not done and why. */
  readonly notes: readonly string[];
}

/** A directory the walk goes into, open on both sides (`mode`: set on the host one when its entries are in). */
interface Descent {
  readonly u: number;
  readonly h: number;
  readonly fresh: boolean;
  readonly mode?: number;
}

/** One directory of the walk's stack: where it is, its upper names and how far it got, and its parents' identities for the way back up. */
interface Frame {
  readonly path: string;
  readonly rel: string;
  readonly names: Buffer[];
  i: number;
  readonly mode: number | undefined;
  readonly up: { readonly u: DirId; readonly h: DirId };
  /** Replaced whole in the sandbox: opaque in the upper layer, or under a directory that is. */
  readonly replaced: boolean;
  /** Its name in the host directory above it (none for the root). */
  readonly name?: Buffer;
  /** The host directory changed during the run (its ctime, read before the commit touched it). */
  readonly hostChanged: boolean;
  /** The host directory: how the second pass reaches it again, and what it must be then. */
  readonly at: HostAt;
  /** How many removals were put off when the walk entered it: more at its end, and its mode is set after them. */
  readonly laterFrom: number;
}

/** A host directory the walk entered: its name in its parent (none for the root) and its identity. */
interface HostAt {
  readonly up?: HostAt;
  readonly name?: Buffer;
  readonly id: DirId;
}

/**
 * A step of the commit's second pass, run once every addition of the first has landed: a removal
 * of a host entry the command deleted (`remove`), of a host entry the command replaced, kept under
 * a journalled name beside its own meanwhile (`aside`), or a folder's mode set after removals in it
 * (`mode`). In `at`, reached again from the root and checked to be the directory the walk was in.
 */
interface Later {
  readonly kind: 'remove' | 'aside' | 'mode';
  readonly at: HostAt;
  readonly name: Buffer;
  readonly path: string;
  readonly id?: DirId;
  readonly mode?: number;
  /** `aside`: the name it was renamed from. */
  readonly orig?: Buffer;
  /** `aside`: its ctime once renamed; a write in it after that is the host's, and keeps it. */
  readonly stamp?: bigint;
}

/** `O_PATH` (Linux): a descriptor that names an inode without opening it, so needs no permission on it. */
const O_PATH = 0o10000000;

/**
 * Gives the host directory `name` (of the directory open at `parentFd`) the mode `mode`, once the
 * walk is back above it: set from inside, a mode without the owner's search bit (`chmod 000` of a
 * new folder) kept an unprivileged daemon from climbing back out, and the rest of the commit was
 * lost (found by an attack). By an `O_PATH` descriptor checked to be the directory the walk made
 * or entered (`id`), never by following a name.
 */
function chmodFromAbove(parentFd: number, name: Buffer, id: DirId, mode: number): void {
  const fd = openSync(atFd(parentFd, name), O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  try {
    const now = idOf(fd);
    if (now.dev !== id.dev || now.ino !== id.ino) throw new Error('it was replaced on the host during the commit, so its mode was not set');
    chmodSync(`/proc/self/fd/${fd}`, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether a new folder's mode can be set when it is made, before its entries go in: the owner (the
 * daemon, or the command's user for a root daemon, which writes anyway) can fill it, and nobody
 * else may write in it meanwhile (no group or other write bit, nor setgid, sticky or setuid: a
 * setgid folder would hand its group to the entries made in it before). Others are made 0700 and
 * given their mode once the walk is back above them (chmodFromAbove).
 */
const earlyMode = (mode: number): boolean => (mode & 0o700) === 0o700 && (mode & 0o7022) === 0;

const NOFOLLOW_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

const DOT_GIT = Buffer.from('.git');
const HEAD_NAME = Buffer.from('HEAD');
const HEAD = Buffer.from('HEAD');
const OBJECTS = Buffer.from('objects');
/** core's {@link GIT_DIR_MARK_NAMES}, as the names the walk meets. */
const GIT_DIR_MARKS = GIT_DIR_MARK_NAMES.map((n) => Buffer.from(n));
const SLASH = Buffer.from('/');
/** A whiteout: the overlay's mark of a removed entry, a character device 0:0. */
const isWhiteout = (st: Stats) => st.isCharacterDevice() && st.rdev === 0;

const child = (dir: string, name: Buffer) => (dir === '/' ? `/${decodeName(name)}` : `${dir}/${decodeName(name)}`);

function lstatAt(fd: number, name: Buffer): Stats | undefined {
  try {
    return lstatSync(atFd(fd, name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

const list = (fd: number) => readdirSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });

/**
 * Judges and commits one overlay's upper layer into its host root. `mountPoints` are the run's
 * mount destinations: an empty entry bwrap made to mount on is not the command's write. Throws only
 * when the host root itself cannot be opened; everything else is reported entry by entry.
 */
export function commitUpper(policy: SandboxPolicy, overlay: OverlayRoot, mountPoints: ReadonlySet<string> = new Set(), since?: Since, only?: ReadonlySet<string>, aside?: string): CommitReport {
  const evaluator = policyEvaluatorOf(policy);
  // `only`: a later commit of approved entries from a kept upper layer; everything else in it was judged before
  const scope = onlyScope(only);
  const committed: string[] = [];
  const refused: string[] = [];
  const conflicts: string[] = [];
  const failed: string[] = [];
  const keptAt: Record<string, string> = {};
  // new repositories the command made whose shape runs nothing (new-repository.ts): data, committed
  const newRepos: string[] = [];
  // new bare repositories judged inert the same way: only their HEAD is lifted (the reach's landing
  // for a HEAD outside .git); a bare repository is an ordinary folder to every other tool, so each
  // other landing in it stays one (found by an attack, h109: `.tool-versions`, `.vscode/tasks.json`
  // and a `.git` file sending git elsewhere landed inside one)
  const newBares: string[] = [];
  // a path the policy hides cannot be created or replaced from inside either (a `.env` the command wrote)
  const inNewRepo = (path: string) => newRepos.length > 0 && newRepos.some((r) => isWithin(path, r));
  const inNewBare = (path: string) => newBares.length > 0 && newBares.includes(dirname(path));
  // new linked worktrees of the root's repository (new-worktree.ts), found before the walk: their git folders whole, their `.git` files
  let worktrees: NewWorktrees = { gitDirs: [], dotGits: [] };
  const inNewWorktree = (path: string) => worktrees.gitDirs.length > 0 && (worktrees.gitDirs.some((w) => isWithin(path, w)) || worktrees.dotGits.includes(path) || worktrees.container === path);
  const writable = (path: string) => !evaluator.hidden(path) && (evaluator.writable(path) || inNewRepo(path) || inNewWorktree(path) || (inNewBare(path) && basename(path) === 'HEAD'));
  /** Admits the upper layer's `.git` folder at `path`, where the host has none, when its folder may hold new entries and its shape runs nothing; says why not otherwise. */
  const admitNewRepository = (upperFd: number, name: Buffer, path: string, bare = false): void => {
    if (!evaluator.writable(join(dirname(path), PROBE_CHILD)) || evaluator.hidden(path)) return;
    const verdict = newRepositoryVerdict(upperFd, name, openUpperDir, bare);
    if (verdict.inert) (bare ? newBares : newRepos).push(path);
    else if (bare) notes.push(`aalis: ${path}: the new bare git repository the command made was not committed as a repository (rule: landing): its HEAD was left out, so git on the host does not take the folder for one: ${verdict.why}\n`);
    else notes.push(`aalis: ${path}: the new git repository the command made was not committed (rule: landing): ${verdict.why}\n`);
  };
  /**
   * The bare-repository disguise: git takes a folder holding `HEAD`, `objects` and `refs` for a
   * repository before it looks for a `.git` above, reads its config and runs its hooks (found by
   * an attack: a command's `docs/HEAD`, `docs/objects/`, `docs/refs/` and a `docs/config` with
   * `core.pager` landed, and the person's next `git log` in docs/ on a terminal ran the pager).
   * True, said in a note, when the new entry `name` would complete them there, with the
   * command's and the host's entries (in one run or over several); only a new repository judged
   * inert whole ({@link admitNewRepository}) lands one.
   */
  const completesDisguise = (upperFd: number, hostFd: number, name: Buffer, path: string): boolean => {
    if (!GIT_DIR_MARKS.some((m) => m.equals(name)) || inNewRepo(path) || inNewBare(path) || inNewWorktree(path)) return false;
    const present = (n: string) => {
      const m = Buffer.from(n);
      if (m.equals(name)) return true;
      const u = lstatAt(upperFd, m);
      return u !== undefined ? !isWhiteout(u) : lstatAt(hostFd, m) !== undefined;
    };
    // a commondir counts (found by an attack, h109: docs/HEAD and docs/commondir naming docs/store,
    // which held objects/, refs/ and the config git obeyed)
    if (!takenForGitDir(present)) return false;
    notes.push(`aalis: ${path}: not committed (rule: landing): with HEAD beside objects and refs (or a commondir) git would take ${dirname(path)} for a repository of its own, whose config it reads and whose hooks it runs\n`);
    return true;
  };
  /** Why a folder's new mode is not committed: a protected name, or one every local user could write in; undefined when it is. */
  const modeRefusal = (path: string, mode: number, before: number): string | undefined => {
    if (!writable(path)) return 'it is a protected name (a landing, the control plane or a hidden one), whose folder the command may not change';
    if (mode & 0o002 & ~before) return 'it would let every user of this machine write there; make it writable for its owner (and group) only';
    return undefined;
  };
  /** A mode as committed: never writable by every local user (said in a note). */
  const keptMode = (path: string, mode: number, what: 'folder' | 'file' = 'folder', before = 0): number => {
    // a bit the host's entry had already is the owner's choice, kept (another owner's 0666 file stays 0666)
    if ((mode & 0o002 & ~before) === 0) return mode;
    notes.push(`aalis: ${path}: the ${what} was committed without the write bit for other users the command gave it (${mode.toString(8)}): every user of this machine could have written there\n`);
    return mode & ~0o002;
  };
  /** Runs one entry's step; a conflict or a failure is that entry's, and the walk goes on. */
  const settle = <T>(path: string, step: () => T): T | undefined => {
    try {
      return step();
    } catch (e) {
      if (e instanceof CommitConflict) {
        conflicts.push(e.path);
        notes.push(conflictNote(e.path, e.keptAt, e.host));
        return undefined;
      }
      failed.push(path);
      notes.push(`aalis: ${path} could not be committed: ${(e as Error).message}\n`);
      return undefined;
    }
  };
  const notes: string[] = [];
  const sameFs = lstatSync(overlay.upper).dev === lstatSync(overlay.root).dev;
  // a rename would carry the overlay's own xattrs onto the host: entries that have one are copied (overlay-xattrs.ts)
  // read at the first entry that could be renamed (before any is): a run that wrote nothing here spawns no getfattr
  let xattrs: OverlayXattrs | undefined;
  const renameOk = (rel: string, tree: boolean): boolean => {
    if (!sameFs) return false;
    xattrs ??= readOverlayXattrs(overlay.upper);
    return renameKeepsNoXattr(xattrs, rel, tree);
  };
  let opaque: OpaqueDirs | undefined;
  let unknown = 0;
  const isOpaque = (rel: string, fd: number): boolean => {
    opaque ??= readOpaqueDirs(overlay.upper);
    if (opaque.ok && (opaque.dirs.has(rel) || opaque.complete)) return opaque.dirs.has(rel);
    const one = isOpaqueAt(fd);
    if (one === undefined) unknown += 1;
    return one ?? false;
  };
  const uid = process.getuid?.() ?? 0;

  // the walks below are iterative with one open directory per side (dir-cursor.ts): any depth
  /** Every path of the host tree at `name` is one the policy lets the command remove. */
  const removable = (hostFd: number, name: Buffer, path: string): boolean =>
    walkTree(
      hostFd,
      name,
      path,
      child,
      (_d, _n, p) => (writable(p) ? 'descend' : 'stop'),
      (d, n) => openDir(atFd(d, n)),
    );

  /**
   * Whether the command removed the host repository `.git` at `path` (its HEAD gone, not
   * replaced: git itself only ever replaces it) where not all of it may be removed (its config and
   * hooks are landings): then none of the removal is committed, and it is said. Before, the rest
   * went (HEAD, objects, refs, index, logs), and a nested repository the command moved with
   * `mv sub sub2` (a copy, then a removal, across the overlay) lost its history, its moved copy
   * refused as a new repository with a hooks path (found by an attack, h113).
   */
  const removingRepository = (upperFd: number, hostFd: number, name: Buffer, path: string): boolean => {
    const u = openUpperDir(upperFd, name);
    if (u === undefined) return false;
    let headGone: boolean;
    try {
      const head = lstatAt(u, HEAD_NAME);
      headGone = head !== undefined && isWhiteout(head);
    } finally {
      closeSync(u);
    }
    if (!headGone || removable(hostFd, name, path)) return false;
    notes.push(`aalis: ${path}: the command removed this repository, but not all of it may be removed (its config and hooks are landings), so none of it was: it is kept whole\n`);
    refused.push(path);
    return true;
  };

  /** Every entry of a new upper tree is allowed (so it can be renamed in at once). */
  const allAllowed = (upperFd: number, name: Buffer, path: string): boolean => {
    let blocked = false;
    const ok = walkTree(
      upperFd,
      name,
      path,
      child,
      (d, n, p) => {
        if (blocked || !writable(p) || mountPoints.has(p)) return 'stop';
        // HEAD, objects or refs outside an admitted repository: judged entry by entry (the bare-repository disguise, completesDisguise)
        if (GIT_DIR_MARKS.some((m) => m.equals(n)) && !inNewRepo(p) && !inNewBare(p) && !inNewWorktree(p)) return 'stop';
        const st = lstatSync(atFd(d, n));
        if (isWhiteout(st)) return 'stop';
        // one every local user could write in goes entry by entry, where its mode is judged (keptMode)
        if (!st.isSymbolicLink() && st.mode & 0o002) return 'stop';
        // a symlink above a protected name goes entry by entry, where it is refused (found by an
        // attack, h113: `sub/tools/bin -> ../../evil/bin` in a new `sub/tools` was renamed in with
        // its folder, and a nested repository's core.fsmonitor ran the command's program)
        if (st.isSymbolicLink() && evaluator.shadowed(p) !== undefined) return 'stop';
        if (!st.isDirectory()) return st.isFile() || st.isSymbolicLink() ? 'leaf' : 'stop';
        return 'descend';
      },
      (d, n) => {
        try {
          const fd = openDir(atFd(d, n));
          if (fd === undefined) blocked = true;
          return fd;
        } catch {
          blocked = true; // unreadable (chmod 300): made readable and committed entry by entry
          return undefined;
        }
      },
    );
    return ok && !blocked;
  };

  /** The files (and empty directories) of a refused upper tree: what the command wrote, each by its path. */
  const refuseTree = (upperFd: number, name: Buffer, path: string): void => {
    walkTree(
      upperFd,
      name,
      path,
      child,
      (d, n, p) => {
        const st = lstatSync(atFd(d, n));
        if (st.isDirectory()) return 'descend';
        if (!isWhiteout(st)) refused.push(p);
        return 'leaf';
      },
      openUpperDir,
      (p) => refused.push(p),
    );
  };

  let keptCount = 0;
  /** The conflict of `path`, the command's version (the upper entry `name`) kept aside first where it can be. */
  const conflictKeeping = (upperFd: number, name: Buffer, st: Stats, path: string, host: HostSide = 'changed'): CommitConflict => {
    const kept = aside === undefined ? undefined : keepAside(upperFd, name, st, join(aside, overlay.root), ++keptCount);
    if (kept !== undefined) keptAt[path] = kept;
    return new CommitConflict(path, kept, host);
  };
  /** Whether the upper entry at `rel` is a copy of a host entry (it carries an overlay xattr); false when that cannot be read. */
  let untold = 0;
  const copiedUp = (rel: string): boolean => {
    xattrs ??= readOverlayXattrs(overlay.upper);
    if (!xattrs.ok) untold += 1;
    return xattrs.ok && xattrs.paths.has(rel);
  };

  /**
   * The steps put off to the commit's second pass ({@link runLater}), in walk order, and the host
   * directory the walk is in (set by walkAll before each entry). A removal comes only once every
   * addition of the commit has landed: a daemon killed midway leaves a duplicate at worst, never
   * a loss. Before, `mv src src2` (a copy and a whiteout across the overlay) had the host's src
   * removed first where readdir listed it first, a kill before src2 landed lost the files, and the
   * next start discarded the rest of the layer (found by an attack, h115 K1).
   */
  const later: Later[] = [];
  let here: HostAt | undefined;

  /**
   * Removes a host entry the command replaced or deleted; a conflict when the host changed it
   * since the start. `replacedBy`: what of the command's takes its place (kept aside then, as a
   * conflicting file is: before, a folder of the command's written where the host had made a file
   * meanwhile was lost whole, unkept). A replaced entry is renamed to a journalled name beside it
   * (`.aalis-replaced-*`, commit-journal.ts) for the command's to take its place, and removed in
   * the second pass; a deleted one is removed there (only: {@link runLater} calls it without
   * `replacedBy`).
   */
  let mounts: Buffer | undefined;
  const removeHost = (hostFd: number, name: Buffer, path: string, replacedBy?: { readonly upperFd: number; readonly st: Stats }): boolean => {
    mounts ??= readMountinfo();
    const mounted = mountAtOrUnder(hostFd, name, mounts);
    if (mounted !== undefined) {
      throw new Error(`it was not removed: a file system is mounted at ${shownBytes(mounted)}, whose files the command never saw (the sandbox shows the folder under a mount), so they are not the command's to delete`);
    }
    if (since !== undefined && treeChangedSince(hostFd, name, since)) {
      if (replacedBy !== undefined) throw conflictKeeping(replacedBy.upperFd, name, replacedBy.st, path);
      throw new CommitConflict(path);
    }
    if (!removable(hostFd, name, path)) {
      refused.push(path);
      return false;
    }
    if (replacedBy !== undefined) {
      const aside = Buffer.from(`.aalis-replaced-${randomBytes(6).toString('hex')}`);
      recordAside(overlay.upper, hostFd, aside.toString(), name); // before the rename: a kill leaves it named, and the next start puts it back or says it
      renameSync(atFd(hostFd, name), atFd(hostFd, aside));
      later.push({ kind: 'aside', at: here!, name: aside, path, orig: name, stamp: lstatSync(atFd(hostFd, aside), { bigint: true }).ctimeNs });
    } else removeAt(hostFd, name);
    committed.push(path);
    return true;
  };

  /**
   * A new file or symlink into the host directory: renamed from the upper layer, or copied to a
   * fresh name, synced, renamed. A file with other links is copied: a rename would give the host
   * two names of one inode, and a landing approved later (kept-writes.ts) would stay a link of a
   * plain file any host tool may edit (found by an attack).
   */
  /** Whether the upper entry can be moved in whole (same file system, no overlay xattr, one link); asked before the host is checked, as it may spawn getfattr. */
  const movable = (st: Stats, rel: string): boolean => sameFs && renameOk(rel, false) && !(st.isFile() && st.nlink > 1) && (st.isSymbolicLink() || (st.mode & 0o002) === 0);
  /**
   * `from` of the directory at `fromFd` becomes `name` of the host directory: over the host's
   * entry when `replace`, else only where there is none (a link, then the old name unlinked: a
   * rename would replace a file another run or the host made there since it was looked at, and
   * that file would be lost; found by an attack). False when there was one.
   */
  const putAt = (fromFd: number, from: Buffer, hostFd: number, name: Buffer, replace: boolean): boolean => {
    if (replace) {
      renameSync(atFd(fromFd, from), atFd(hostFd, name));
      return true;
    }
    try {
      linkSync(atFd(fromFd, from), atFd(hostFd, name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e;
    }
    unlinkSync(atFd(fromFd, from));
    return true;
  };
  const placeFile = (upperFd: number, hostFd: number, name: Buffer, path: string, st: Stats, move: boolean, replace: boolean, hostMode?: number): boolean => {
    if (move) {
      try {
        return putAt(upperFd, name, hostFd, name, replace);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      }
    }
    const tmp = Buffer.from(`.aalis-commit-${randomBytes(6).toString('hex')}`);
    recordTemp(overlay.upper, hostFd, tmp.toString()); // before it exists: a kill leaves no temp unnamed (commit-journal.ts)
    try {
      if (st.isFIFO()) {
        // a named pipe is made anew (copying one would read nothing and leave an empty file); the name is ASCII, so a path string carries it
        // its mode judged as a file's: every local user could write into it otherwise (found by an attack)
        execFileSync('mkfifo', ['-m', keptMode(path, st.mode & 0o7777, 'file', hostMode).toString(8), `/proc/${process.pid}/fd/${hostFd}/${tmp.toString()}`], { stdio: 'ignore' });
        if (uid === 0) lchownSync(atFd(hostFd, tmp), st.uid, st.gid);
      } else if (st.isSymbolicLink()) {
        symlinkSync(readlinkSync(atFd(upperFd, name), { encoding: 'buffer' }), atFd(hostFd, tmp));
        if (uid === 0) lchownSync(atFd(hostFd, tmp), st.uid, st.gid);
      } else {
        const src = openUpperFile(upperFd, name);
        try {
          // O_EXCL: a name that appeared meanwhile (even a symlink) is never opened
          const out = openSync(atFd(hostFd, tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
          try {
            copySparse(src, out);
            if (uid === 0) fchownSync(out, st.uid, st.gid);
            fchmodSync(out, keptMode(path, st.mode & 0o7777, 'file', hostMode));
            fsyncSync(out);
          } finally {
            closeSync(out);
          }
        } finally {
          closeSync(src);
        }
      }
    } catch (e) {
      // a copy that failed (the disk full, say) leaves no temp behind on the host: it held as much
      // as it got, and nothing swept it before the daemon's next start (found by an attack)
      removeAt(hostFd, tmp);
      throw e;
    }
    let placed: boolean;
    try {
      placed = putAt(hostFd, tmp, hostFd, name, replace);
    } catch (e) {
      removeAt(hostFd, tmp);
      throw e;
    }
    if (!placed) removeAt(hostFd, tmp);
    return placed;
  };

  /**
   * Enters one upper directory against its host directory (`fresh`: made by this commit, so it held
   * nothing before): its names, and for a directory replaced whole the host entries it lacks removed.
   */
  const enter = (upperFd: number, hostFd: number, path: string, rel: string, fresh: boolean, mode: number | undefined, up: { u: DirId; h: DirId }, underReplaced: boolean, at: HostAt): Frame => {
    const laterFrom = later.length;
    const names = list(upperFd);
    const hostChanged = !fresh && since !== undefined && dirChangedSince(hostFd, since);
    // A directory made under one replaced whole is replaced whole too, though the kernel marks only
    // the top one opaque: the command saw none of the host's entries there (`rm -rf build; mkdir -p
    // build/out` left the host's old build/out/* in place before; found by an attack).
    const replaced = underReplaced || (!fresh && rel !== '' && isOpaque(rel, upperFd));
    if (replaced && !fresh) {
      // replaced whole in the sandbox: what the host has and the upper layer lacks was removed (in
      // the second pass: listed now, before any entry of the command's lands here)
      const inUpper = new Set(names.map((n) => n.toString('latin1')));
      for (const n of list(hostFd)) if (!inUpper.has(n.toString('latin1')) && scope(child(path, n)) !== 'out') later.push({ kind: 'remove', at, name: n, path: child(path, n) });
    }
    return { path, rel, names, i: 0, mode, up, replaced, hostChanged, at, laterFrom };
  };

  /**
   * The whole walk, depth first with an explicit stack: one open directory per side at a time,
   * back up through `..` checked by identity (dir-cursor.ts). Takes both descriptors and closes
   * whatever it holds at the end.
   */
  const walkAll = (upperRoot: number, hostRoot: number): void => {
    let u = upperRoot;
    let h = hostRoot;
    try {
      const frames: Frame[] = [enter(u, h, overlay.root, '', false, undefined, { u: idOf(u), h: idOf(h) }, false, { id: idOf(h) })];
      while (frames.length > 0) {
        const top = frames.at(-1)!;
        if (top.i === top.names.length) {
          frames.pop();
          if (frames.length === 0) break;
          const id = idOf(h);
          try {
            u = upTo(u, top.up.u);
            h = upTo(h, top.up.h);
          } catch (e) {
            const at = frames.at(-1)!.path;
            failed.push(at);
            notes.push(`aalis: ${at} moved on the host during the commit (${(e as Error).message}): what the command wrote after ${top.path} was not committed\n`);
            break;
          }
          // writable by the daemon while its entries went in; its own mode once they are in, and
          // after the removals in it where the walk put some off (the second pass)
          if (top.mode !== undefined && top.name !== undefined) {
            if (later.length > top.laterFrom) later.push({ kind: 'mode', at: frames.at(-1)!.at, name: top.name, path: top.path, id, mode: top.mode });
            else settle(top.path, () => chmodFromAbove(h, top.name!, id, top.mode!));
          }
          continue;
        }
        const name = top.names[top.i++]!;
        const p = child(top.path, name);
        const r = top.rel === '' ? decodeName(name) : `${top.rel}/${decodeName(name)}`;
        here = top.at;
        const down = settle(p, () => entry(u, h, name, p, r, top.hostChanged));
        if (down === undefined) continue;
        const frame = settle(p, () => ({ ...enter(down.u, down.h, p, r, down.fresh, down.mode, { u: idOf(u), h: idOf(h) }, top.replaced, { up: top.at, name, id: idOf(down.h) }), name }));
        if (frame === undefined) {
          closeSync(down.u);
          closeSync(down.h);
          continue;
        }
        closeSync(u);
        closeSync(h);
        u = down.u;
        h = down.h;
        frames.push(frame);
      }
    } finally {
      closeSync(u);
      closeSync(h);
    }
  };

  /**
   * A directory of the command's where the host had none at the start, and has an entry now (the
   * host, or another run's commit, made it meanwhile): a directory is merged entry by entry, each
   * judged as under any host directory (a file made there since is a conflict, kept aside); anything
   * else is a conflict, the command's tree kept aside. Before, the command's whole new directory
   * was lost when another run had made one of the same name (found by an attack).
   */
  const madeMeanwhile = (upperFd: number, hostFd: number, name: Buffer, st: Stats, path: string): Descent => {
    const now = lstatAt(hostFd, name);
    if (now?.isDirectory()) {
      const h = openDir(atFd(hostFd, name));
      const u = openUpperDir(upperFd, name);
      if (h !== undefined && u !== undefined) return { u, h, fresh: false };
      if (u !== undefined) closeSync(u);
      if (h !== undefined) closeSync(h);
    }
    throw conflictKeeping(upperFd, name, st, path);
  };

  /** One upper entry judged and committed; a directory to walk into is returned open on both sides. */
  const entry = (upperFd: number, hostFd: number, name: Buffer, path: string, rel: string, hostDirChanged: boolean): Descent | undefined => {
    if (scope(path) === 'out') return;
    const st = lstatSync(atFd(upperFd, name));
    const host = lstatAt(hostFd, name);
    if (isWhiteout(st)) {
      if (host) later.push({ kind: 'remove', at: here!, name, path }); // once every addition has landed (the second pass)
      return;
    }
    if (st.isDirectory()) {
      if (host?.isDirectory() && name.equals(DOT_GIT) && removingRepository(upperFd, hostFd, name, path)) return;
      if (host?.isDirectory()) {
        const h = openDir(atFd(hostFd, name));
        const u = openUpperDir(upperFd, name);
        if (h === undefined || u === undefined) {
          if (u !== undefined) closeSync(u);
          if (h !== undefined) closeSync(h);
          // the host made it something else since it was looked at: a conflict, the command's tree kept
          throw conflictKeeping(upperFd, name, st, path);
        }
        // a chmod of the command's is carried over (it was dropped unsaid before) unless the host
        // changed the directory since the start (its entries or its own mode): then it is said
        const mode = st.mode & 0o7777;
        if (mode === (host.mode & 0o7777)) return { u, h, fresh: false };
        // a mode is a write to the folder itself, judged as one (found by an attack: `chmod 777
        // .git` was committed unjudged, and another local user then swapped .git/hooks for theirs)
        const refusal = modeRefusal(path, mode, host.mode & 0o7777);
        if (refusal !== undefined) {
          notes.push(`aalis: ${path}: the command's change of its mode (to ${mode.toString(8)}) was not committed: ${refusal}\n`);
          return { u, h, fresh: false };
        }
        if (since !== undefined && changedSince(hostFd, name, since)) {
          notes.push(`aalis: ${path}: the command's change of its mode (to ${mode.toString(8)}) was not committed, as the folder changed on the host during the run\n`);
          return { u, h, fresh: false };
        }
        return { u, h, fresh: false, mode };
      }
      if (!host && mountPoints.has(path) && list0(upperFd, name)) return; // a mount point bwrap made
      // a copy of a host folder (a file in it was changed) that the host removed or renamed during
      // the run: made again, it put back what the host had removed, unsaid (found by an attack)
      if (!host && hostDirChanged && copiedUp(rel)) throw conflictKeeping(upperFd, name, st, path, 'gone');
      if (!host && only === undefined && name.equals(DOT_GIT) && !writable(path)) admitNewRepository(upperFd, name, path);
      // a new bare repository (`git init --bare`, a local remote): judged whole as a new `.git` is
      // (new-repository.ts); outside one so admitted, its HEAD, objects and refs together are refused (completesDisguise)
      else if (!host && only === undefined && writable(path) && isBareShape(upperFd, name)) admitNewRepository(upperFd, name, path, true);
      if (!host && completesDisguise(upperFd, hostFd, name, path)) {
        refuseTree(upperFd, name, path);
        return;
      }
      if (!writable(path)) {
        refuseTree(upperFd, name, path);
        return;
      }
      if (host && !removeHost(hostFd, name, path, { upperFd, st })) {
        refuseTree(upperFd, name, path);
        return;
      }
      if (only === undefined && sameFs && (st.mode & 0o002) === 0 && renameOk(rel, true) && allAllowed(upperFd, name, path)) {
        try {
          // where the host had none: a rename replaces an empty directory made there since, never a full one
          renameSync(atFd(upperFd, name), atFd(hostFd, name));
          committed.push(path);
          return;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') return madeMeanwhile(upperFd, hostFd, name, st, path);
          if (code !== 'EXDEV') throw e;
        }
      }
      // writable by the daemon while its entries go in; its own mode once they are in (walkAll), or
      // at once where that keeps it so and lets nobody else write there (below)
      const mode = keptMode(path, st.mode & 0o7777);
      try {
        mkdirSync(atFd(hostFd, name), { mode: 0o700 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return madeMeanwhile(upperFd, hostFd, name, st, path);
        throw e;
      }
      committed.push(path);
      const h = openDir(atFd(hostFd, name));
      const u = openUpperDir(upperFd, name);
      try {
        if (h === undefined || u === undefined) throw new Error('the directory vanished while it was committed');
        if (uid === 0) fchownSync(h, st.uid, st.gid);
        // a mode that keeps it the owner's to fill and nobody else's to write in (0755, 0750, 0700)
        // is set now: a daemon killed before the walk came back above it left it 0700, its group
        // and others shut out, and the next start did not put it right (found by an attack, h115 K2)
        if (earlyMode(mode)) fchmodSync(h, mode);
      } catch (e) {
        if (u !== undefined) closeSync(u);
        if (h !== undefined) closeSync(h);
        throw e;
      }
      return { u, h, fresh: true, mode: earlyMode(mode) ? undefined : mode };
    }
    if (!st.isFile() && !st.isSymbolicLink() && !st.isFIFO()) {
      // a socket or a device: nothing that outlives the command
      notes.push(`aalis: ${path} (a socket or device the command made) was not committed\n`);
      return;
    }
    if (!host && mountPoints.has(path) && st.isFile() && st.size === 0) return; // a mount point bwrap made
    // A copy of a host file (the overlay's `origin` mark) where the host has none now, in a folder
    // the host changed during the run: the host removed or renamed it meanwhile, and committing
    // would put it back (said nowhere before). The command's version is kept aside instead. A
    // file the command only renamed lands where the host folder did not change, and is committed.
    if (!host && hostDirChanged && copiedUp(rel)) throw conflictKeeping(upperFd, name, st, path, 'gone');
    if (!writable(path)) {
      refused.push(path);
      return;
    }
    if (!host && completesDisguise(upperFd, hostFd, name, path)) {
      refused.push(path);
      return;
    }
    // a symlink above a landing or a hidden path moves it onto what the link names: a write to it
    const shadowed = st.isSymbolicLink() ? evaluator.shadowed(path) : undefined;
    if (shadowed !== undefined) {
      notes.push(`aalis: ${path}: the symlink the command made was not committed (rule: landing): it would send ${shadowed}, which the policy protects, where the link points\n`);
      refused.push(path);
      return;
    }
    // before the host is checked: it may spawn getfattr, which held the check and the rename apart
    const move = movable(st, rel);
    if (host && !host.isDirectory() && sameAsHost(upperFd, hostFd, name, st, host)) return; // only its times changed: nothing to commit
    if (host && !host.isDirectory() && since !== undefined && changedSince(hostFd, name, since)) throw conflictKeeping(upperFd, name, st, path);
    if (host?.isDirectory() && !removeHost(hostFd, name, path, { upperFd, st })) return;
    // a file the host had (and kept since the start) is replaced; where there was none, one made since is never replaced
    const hostFile = host !== undefined && !host.isDirectory();
    if (!placeFile(upperFd, hostFd, name, path, st, move, hostFile, hostFile ? host.mode & 0o7777 : undefined)) throw conflictKeeping(upperFd, name, st, path);
    committed.push(path);
  };

  /** The host directory `at` opened again from the root by descriptors, checked to be the one the walk was in. */
  const reach = (at: HostAt): number => {
    const names: Buffer[] = [];
    for (let a: HostAt | undefined = at; a?.name !== undefined; a = a.up) names.push(a.name);
    let fd = openDir(encodePath(overlay.root));
    try {
      for (const n of names.reverse()) {
        if (fd === undefined) break;
        const next = openDir(atFd(fd, n));
        closeSync(fd);
        fd = next;
      }
    } catch (e) {
      if (fd !== undefined) closeSync(fd);
      throw e;
    }
    if (fd === undefined) throw new Error('its folder is gone from the host');
    const now = idOf(fd);
    if (now.dev !== at.id.dev || now.ino !== at.id.ino) {
      closeSync(fd);
      throw new Error('its folder moved on the host during the commit');
    }
    return fd;
  };

  /**
   * The second pass: the steps the walk put off ({@link later}), in its order, each in the host
   * directory it was met in. A removal is judged as it was before (removeHost: a host change since
   * the start is a conflict); a replaced entry kept aside goes; a folder's mode is set after them.
   */
  const runLater = (): void => {
    let fd: number | undefined;
    let fdAt: HostAt | undefined;
    let unreached: Error | undefined;
    try {
      for (const step of later) {
        if (step.at !== fdAt) {
          if (fd !== undefined) closeSync(fd);
          fd = undefined;
          unreached = undefined;
          fdAt = step.at;
          try {
            fd = reach(step.at);
          } catch (e) {
            unreached = e as Error;
          }
        }
        const at = fd;
        if (step.kind === 'aside') {
          // the command's entry is in its place: the host's old one goes; where it did not land
          // (a failure, a conflict) the host's is put back; or it stays beside it, said
          try {
            if (at === undefined) throw unreached!;
            if (lstatAt(at, step.orig!) === undefined) {
              renameSync(atFd(at, step.name), atFd(at, step.orig!));
              notes.push(`aalis: ${step.path}: the command's entry did not take its place, so the host's was put back\n`);
            } else if (asideChanged(at, step)) {
              // a host program wrote in it while the first pass ran (its cwd there): that write is
              // the host's, and kept (found by an attack, h119: removed unsaid, 2 to 5 files a run)
              notes.push(`aalis: ${step.path}: the host's entry the command replaced was kept beside it as ${shownBytes(step.name)}: the host wrote in it during the commit\n`);
            } else removeAt(at, step.name);
          } catch (e) {
            notes.push(`aalis: ${step.path}: the host's entry the command replaced was kept beside it as ${shownBytes(step.name)}: ${(e as Error).message}\n`);
          }
          continue;
        }
        settle(step.path, () => {
          if (at === undefined) throw unreached!;
          if (step.kind === 'mode') chmodFromAbove(at, step.name, step.id!, step.mode!);
          else if (lstatAt(at, step.name) !== undefined) removeHost(at, step.name, step.path);
        });
      }
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  };

  /**
   * Whether the host changed an entry kept aside: the entry itself since it was renamed (its ctime
   * then), anything in it since the run started (a write between the check before the rename and
   * the rename too: the rename moves the folder's own ctime, not its entries').
   */
  const asideChanged = (at: number, step: Later): boolean => {
    const now = lstatSync(atFd(at, step.name), { bigint: true });
    if (now.ctimeNs !== step.stamp) return true;
    if (!now.isDirectory()) return false;
    const d = openDir(atFd(at, step.name));
    if (d === undefined) return true;
    try {
      const from = since ?? { ns: step.stamp! + 1n, devs: [now.dev] };
      return list(d).some((n) => treeChangedSince(d, n, from));
    } finally {
      closeSync(d);
    }
  };

  const hostRoot = openDir(encodePath(overlay.root));
  if (hostRoot === undefined) throw new Error(`the writable root ${overlay.root} is no longer a directory`);
  // reached by its own path: a folder above it swapped for a symlink meanwhile (a host program's
  // rename) would have this root's writes committed, as root, wherever the link points
  if (!encodePath(overlay.root).equals(readlinkSync(`/proc/self/fd/${hostRoot}`, { encoding: 'buffer' }))) {
    closeSync(hostRoot);
    throw new Error(`the writable root ${overlay.root} is reached through a symlink now (a folder above it was replaced since the run started)`);
  }
  let upperRoot: number | undefined;
  try {
    upperRoot = openDir(encodePath(overlay.upper));
  } finally {
    if (upperRoot === undefined) closeSync(hostRoot);
  }
  if (upperRoot === undefined) throw new Error(`the run's upper layer ${overlay.upper} is gone`);
  if (only === undefined) {
    try {
      worktrees = newWorktrees(upperRoot, hostRoot, overlay.root, openUpperDir, (dir) => evaluator.writable(join(dir, PROBE_CHILD)) && !evaluator.hidden(dir));
      for (const w of worktrees.refused ?? []) notes.push(`aalis: ${w}: the new git worktree the command made was not committed (rule: landing): it holds more than git's own per-worktree state, or its commondir, gitdir or .git file do not name each other as \`git worktree add\` writes them\n`);
    } catch (e) {
      notes.push(`aalis: the new git worktrees the command made could not be read (${(e as Error).message}): they were judged as any other write (refused: landings)\n`);
    }
  }
  walkAll(upperRoot, hostRoot);
  runLater();
  if (untold > 0 && xattrs !== undefined && !xattrs.ok) {
    notes.push(`aalis: ${untold} new entries in folders the host changed during the run could not be told apart from copies of entries the host removed meanwhile (${xattrs.reason}): they were committed, and may put back what the host removed\n`);
  }
  if (unknown > 0) {
    const why = opaque && !opaque.ok ? opaque.reason : 'getfattr could not read them';
    notes.push(`aalis: ${unknown} directories could not be checked for having been replaced whole (${why}): entries of the old ones were kept on the host\n`);
  }
  if (only !== undefined) refused.splice(0, refused.length, ...refused.filter((p) => scope(p) === 'in'));
  for (const p of refused) if (evaluator.hidden(p)) notes.push(`aalis: ${p} was not committed (rule: deny-read): the policy hides it from the command, so the command may not create or replace it either\n`);
  return { committed, refused, conflicts, failed, keptAt, notes };
}

/**
 * Copies the command's version of a conflicting file, symlink or directory (its whole tree, by
 * copy-tree.ts's walk) into `folder` (the daemon's own, never a host path the command could
 * reach), as `<n>-<its name, escaped>`: one flat entry per conflict, whose name no other conflict
 * has. Before, the copy went to the folder plus the entry's path as text, its parents made by
 * path: names that are not UTF-8 (`\xff`) and U+FFFD's own bytes became the same text, so a
 * symlink of the command's kept there first led the next copy through it, anywhere on the host
 * (found by an attack: a root-owned file in a cron folder). Undefined when it could not be kept.
 */
function keepAside(upperFd: number, name: Buffer, st: Stats, folder: string, n: number): string | undefined {
  try {
    // the folder's parts are the daemon's state folder and the writable root's path: none the command named
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const dest = join(folder, `${n}-${shownBytes(name).slice(0, 200)}`);
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(atFd(upperFd, name), { encoding: 'buffer' }), dest);
    else if (st.isFile()) copyFileSync(atFd(upperFd, name), dest, constants.COPYFILE_EXCL);
    else if (st.isDirectory()) copyAt(upperFd, name, encodePath(dest));
    else return undefined;
    return dest;
  } catch {
    return undefined;
  }
}

/**
 * Where a path stands against the approved set of a later commit: approved itself (`in`), on the
 * way to an approved one (`ancestor`: walked, made where missing and writable), or neither (`out`:
 * left in the layer untouched). Without a set every path is `in`.
 */
function onlyScope(only: ReadonlySet<string> | undefined): (path: string) => 'in' | 'ancestor' | 'out' {
  if (only === undefined) return () => 'in';
  const ancestors = new Set<string>();
  for (const p of only) for (let d = dirname(p); d !== dirname(d) && !ancestors.has(d); d = dirname(d)) ancestors.add(d);
  return (path) => (only.has(path) ? 'in' : ancestors.has(path) ? 'ancestor' : 'out');
}

/**
 * Whether the upper layer's folder `name` holds what makes git take a folder for a bare repository:
 * a `HEAD` file and an `objects` folder. Looked up without opening it: opening one the command
 * made unlistable (`chmod 300`) would make it listable ({@link openUpperDir}), and a whole-folder
 * rename would then commit that mode instead of the command's (found by the CI run of this change).
 * One that cannot be searched is no bare repository here; its entries are judged one by one.
 */
function isBareShape(fd: number, name: Buffer): boolean {
  const childStat = (child: Buffer) => {
    try {
      return lstatSync(Buffer.concat([atFd(fd, name), SLASH, child]));
    } catch {
      return undefined;
    }
  };
  return childStat(HEAD)?.isFile() === true && childStat(OBJECTS)?.isDirectory() === true;
}

/**
 * Opens a directory of the upper layer. One the command made unreadable (`chmod 300`) is made
 * readable by its owner first: the daemon owns the layer, which only it can reach (mode 0700), and
 * the command is gone, so nothing can swap it meanwhile. Its committed copy gets the command's mode.
 */
function openUpperDir(fd: number, name: Buffer): number | undefined {
  try {
    return openDir(atFd(fd, name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    const st = lstatSync(atFd(fd, name));
    if (!st.isDirectory()) throw e;
    chmodSync(atFd(fd, name), (st.mode & 0o7777) | 0o700);
    return openDir(atFd(fd, name));
  }
}

/**
 * Opens a file of the upper layer for its copy. One the command left unreadable (`chmod 000`, a
 * write-only `0200`) is made readable by its owner first, as {@link openUpperDir} does for a
 * folder: an unprivileged daemon could not open it, and a file the command changed (so copied, not
 * renamed) was not committed (found by an attack). The host copy gets the command's mode.
 */
function openUpperFile(fd: number, name: Buffer): number {
  try {
    return openSync(atFd(fd, name), NOFOLLOW_READ);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    const st = lstatSync(atFd(fd, name));
    if (!st.isFile()) throw e;
    chmodSync(atFd(fd, name), (st.mode & 0o7777) | 0o400);
    return openSync(atFd(fd, name), NOFOLLOW_READ);
  }
}

/** Whether the upper directory at `name` is empty. */
function list0(fd: number, name: Buffer): boolean {
  const d = openDir(atFd(fd, name));
  if (d === undefined) return false;
  try {
    return list(d).length === 0;
  } finally {
    closeSync(d);
  }
}

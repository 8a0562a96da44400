import { lstatSync, realpathSync } from 'node:fs';
import { ENV_FD } from './launch-env.js';
import { isWithin } from './rule-match.js';
import type { Translation } from './translate.js';

/*
 * bubblewrap 0.8 reads the whole of /proc/self/mountinfo for every bind and every `--remount-ro`
 * (to find the submounts the flags go to): with the host's mounts twice (old and new root) and one
 * line per policy mount, a daemon's sandbox read it 60 times, 1.6 MB of text the kernel formats
 * and bwrap parses, about a third of bwrap's CPU (perf, `show_mountinfo` and `sscanf`). The root
 * map's step (root-map.helper.ts) runs just before bwrap, in the mount namespace bwrap starts from,
 * and mounts with mount(2) directly: the hidden entries are mounted there instead, read-only, and
 * bwrap's recursive binds (`/` and each writable root) carry them into the sandbox as they are.
 *
 * Only where that gives the same view: an entry is taken off bwrap's arguments when nothing else
 * bwrap mounts lies at or under it, no bind bwrap makes takes its source from under it, and every
 * mount bwrap makes over one of its ancestors is a bind of that same path (which carries what is
 * mounted under it) rather than a fresh file system (a tmpfs, /proc, /dev) or a bind from another
 * place, under which the entry hidden on the host side would not be seen at all. Anything else
 * stays with bwrap, as before; an argument this parser does not know leaves every one with bwrap.
 */

/** Operands each bwrap option takes; an option not here means the arguments are left as they are. */
const ARITY: Readonly<Record<string, number>> = {
  '--unshare-user': 0,
  '--unshare-ipc': 0,
  '--unshare-pid': 0,
  '--unshare-net': 0,
  '--unshare-uts': 0,
  '--unshare-cgroup-try': 0,
  '--die-with-parent': 0,
  '--new-session': 0,
  '--disable-userns': 0,
  '--clearenv': 0,
  '--cap-drop': 1,
  '--json-status-fd': 1,
  '--block-fd': 1,
  '--args': 1,
  '--chdir': 1,
  '--seccomp': 1,
  '--tmpfs': 1,
  '--remount-ro': 1,
  '--proc': 1,
  '--dev': 1,
  '--dir': 1,
  '--uid': 1,
  '--gid': 1,
  '--file': 2,
  '--ro-bind': 2,
  '--bind': 2,
  '--dev-bind': 2,
  '--symlink': 2,
  '--setenv': 2,
  '--chmod': 2,
};

/**
 * What the step's exec of bwrap reads after the hides (ld.so's cache and preload list, the library
 * directories, and the stores NixOS and Guix keep every binary and library in; a symlink's target
 * resolved): an entry at, under or over one of them stays with bwrap, which
 * mounts it only in the sandbox. A hidden .env that is a relative symlink to libcap (its target is
 * hidden too) otherwise left bwrap unable to start.
 */
const BWRAP_LOADS = ['/etc/ld.so.cache', '/etc/ld.so.preload', '/lib', '/lib32', '/lib64', '/libx32', '/usr/lib', '/usr/lib32', '/usr/lib64', '/usr/libx32', '/usr/local/lib', '/nix/store', '/gnu/store'];

/** Options that mount something at their last operand; a bind's source is its first. */
const BINDS = new Set(['--ro-bind', '--bind', '--dev-bind']);
const FRESH = new Set(['--tmpfs', '--proc', '--dev']);
/** Options that act on a path without mounting over what is under it. */
const NOT_A_MOUNT = new Set(['--remount-ro', '--chmod', '--chdir']);

interface Op {
  readonly at: number;
  readonly flag: string;
  readonly operands: readonly string[];
}

/** What {@link premountHides} gives: bwrap's arguments without the entries, and the root map step's `hides` operands. */
export interface Premounts {
  readonly args: string[];
  /** `f <source> <path>` per hidden file, then `d - <path>` per hidden directory (root-map.helper.ts). */
  readonly hides: string[];
}

function parse(args: readonly string[]): Op[] | undefined {
  const ops: Op[] = [];
  for (let i = 0; i < args.length; ) {
    const flag = args[i]!;
    if (flag === '--') return ops; // the command follows
    const n = ARITY[flag];
    if (n === undefined || i + n >= args.length) return undefined;
    // names that are not UTF-8 put the mounts on another fd, out of sight here: leave them all
    if (flag === '--args' && args[i + 1] !== String(ENV_FD)) return undefined;
    ops.push({ at: i, flag, operands: args.slice(i + 1, i + 1 + n) });
    i += 1 + n;
  }
  return undefined; // no command: not arguments this knows
}

const destOf = (op: Op): string | undefined => (op.flag === '--symlink' || op.flag === '--file' || BINDS.has(op.flag) ? op.operands[1] : FRESH.has(op.flag) || op.flag === '--dir' || NOT_A_MOUNT.has(op.flag) ? op.operands[0] : undefined);

/**
 * Takes the hidden entries of `translation` that the root map's step can mount in bwrap's place
 * off `args` (bwrap's arguments up to and with its `--` and the command): each hidden file's
 * `--ro-bind <source> <path>`, each hidden directory's `--tmpfs <path>` with its `--remount-ro`.
 * `bwrap` is the binary the step then runs (its real path), which no hide may cover; `plain`
 * says whether an entry is there and not a symlink (only those are taken).
 */
export function premountHides(args: readonly string[], translation: Pick<Translation, 'mounts'>, bwrap: string, plain: (path: string) => boolean = () => true): Premounts {
  const ops = parse(args);
  if (!ops) return { args: [...args], hides: [] };
  // indexed once (a daemon's plan: ~300 arguments, ~50 hidden entries, twice a call): the ops by
  // their path, and how many mount paths and bind sources lie at or under each directory
  const byDest = new Map<string, Op[]>();
  const destsUnder = new Map<string, number>();
  const sourcesUnder = new Map<string, number>();
  const count = (into: Map<string, number>, path: string) => {
    for (const a of selfAndAncestors(path)) into.set(a, (into.get(a) ?? 0) + 1);
  };
  for (const op of ops) {
    const dest = destOf(op);
    if (dest !== undefined) {
      byDest.set(dest, [...(byDest.get(dest) ?? []), op]);
      count(destsUnder, dest);
    }
    if (BINDS.has(op.flag)) count(sourcesUnder, op.operands[0]!);
  }
  const loads = [bwrap, ...BWRAP_LOADS];
  const taken = new Set<number>();
  const files: string[] = [];
  const dirs: string[] = [];
  const hidden = translation.mounts.filter((m) => m.state === 'hidden' && m.why !== 'socket-home' && m.path !== '/');
  for (const m of hidden) {
    const own = byDest.get(m.path) ?? [];
    const shape = m.kind === 'dir' ? own.length === 2 && own[0]!.flag === '--tmpfs' && own[1]!.flag === '--remount-ro' : own.length === 1 && own[0]!.flag === '--ro-bind';
    // mount(2) follows a symlink at the entry (bwrap resolves it in the sandbox's view): the hide
    // would land on its target, which may be the bwrap binary the step then runs
    if (!shape || !plain(m.path)) continue;
    // what the step's exec of bwrap loads: its binary, the dynamic loader's cache and libraries
    if (loads.some((p) => isWithin(p, m.path) || isWithin(m.path, p))) continue;
    // something else mounted (or remounted, or entered) at or under it
    if ((destsUnder.get(m.path) ?? 0) > own.length) continue;
    // a directory holding a bind's source: the source would be hidden (a file's own source is the empty file)
    if (m.kind === 'dir' && (sourcesUnder.get(m.path) ?? 0) > 0) continue;
    // over an ancestor: only a bind of that same path carries what is mounted under it
    const carried = selfAndAncestors(m.path)
      .slice(1)
      .every((a) => (byDest.get(a) ?? []).every((op) => NOT_A_MOUNT.has(op.flag) || (BINDS.has(op.flag) && op.operands[0] === a)));
    if (!carried) continue;
    for (const op of own) taken.add(op.at);
    if (m.kind === 'dir') dirs.push('d', '-', m.path);
    else files.push('f', own[0]!.operands[0]!, m.path);
  }
  if (taken.size === 0) return { args: [...args], hides: [] };
  return { args: withoutOps(args, ops, taken), hides: [...files, ...dirs] };
}

/** `args` without the options that start at the positions in `drop` (with their operands); `rename` gives an option at a position another name. */
function withoutOps(args: readonly string[], ops: readonly Op[], drop: ReadonlySet<number>, rename: ReadonlyMap<number, string> = new Map()): string[] {
  const rest: string[] = [];
  const starts = new Map(ops.map((op) => [op.at, op]));
  for (let i = 0; i < args.length; ) {
    const op = starts.get(i);
    if (op && drop.has(i)) {
      i += 1 + op.operands.length;
      continue;
    }
    rest.push(rename.get(i) ?? args[i]!);
    i += 1;
  }
  return rest;
}

/** What {@link readOnlyByStep} gives: bwrap's arguments, and whether the root map's step makes the host's mounts read-only first. */
export interface StepReadOnly {
  readonly args: string[];
  /** The step makes every host mount read-only once it has mounted the overlays, and each overlay writable again (root-map.helper.ts `read_only_tree`); bwrap binds `/` as it is. */
  readonly readOnly: boolean;
}

/*
 * bwrap's `--ro-bind / /` remounts each mount under / read-only, one mount(2) for each (the host's
 * and the step's: 45 in the test scene), and each writable root is then bound back over itself,
 * each bind one more read of the whole mount table. Under the overlay model every writable mount is
 * one of the root map step's overlays, so the step makes every mount read-only itself (one
 * recursive mount_setattr once its own are mounted, each overlay then writable again by its mount's
 * descriptor: root-map.helper.ts `read_only_tree`), bwrap binds / as it is, and a root's bind over
 * itself goes where it only restored what was already there.
 */

/**
 * bwrap's arguments for a root map step that makes the host's mounts read-only: the root's
 * `--ro-bind / /` becomes `--bind / /`, and each `--bind R R` of an overlay root R (`overlayRoots`,
 * the step's) goes where nothing bwrap mounts before it lies over R but binds of their own path.
 * Only where every writable bind's source lies in an overlay root (a bind from anywhere else would
 * now be read-only); otherwise, or with arguments this parser does not know, `args` as they are.
 */
export function readOnlyByStep(args: readonly string[], overlayRoots: readonly string[]): StepReadOnly {
  const ops = parse(args);
  const same: StepReadOnly = { args: [...args], readOnly: false };
  if (!ops) return same;
  const mounts = ops.filter((op) => destOf(op) !== undefined && !NOT_A_MOUNT.has(op.flag));
  const root = mounts.find((op) => op.flag !== '--file');
  if (root?.flag !== '--ro-bind' || root.operands[0] !== '/' || root.operands[1] !== '/') return same;
  const inOverlay = (p: string) => overlayRoots.some((r) => isWithin(p, r));
  if (ops.some((op) => op.flag === '--dev-bind' || (op.flag === '--bind' && !inOverlay(op.operands[0]!)))) return same;
  const selfBind = (op: Op) => op.flag === '--bind' && op.operands[0] === op.operands[1];
  const dropped = new Set<number>();
  for (const op of mounts) {
    if (op.flag !== '--bind' || op.operands[0] !== op.operands[1] || !overlayRoots.includes(op.operands[0]!)) continue;
    const r = op.operands[0]!;
    // before it, over r or an ancestor: only the root's bind and writable binds of their own path,
    // each of which carries the step's overlay at r as it is (a tmpfs, /proc, /dev or a read-only
    // bind there would leave r hidden or read-only without this bind)
    const carried = mounts.every((o) => o.at >= op.at || o === root || !isWithin(r, destOf(o)!) || selfBind(o));
    if (carried) dropped.add(op.at);
  }
  return { args: withoutOps(args, ops, dropped, new Map([[root.at, '--bind']])), readOnly: true };
}

/** `path` and each directory above it, up to `/`. */
function selfAndAncestors(path: string): string[] {
  const out = [path];
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) out.push(path.slice(0, i));
  if (path !== '/') out.push('/');
  return out;
}

/** `path` with its symlinks resolved (the bwrap binary a hide must not cover), or as given when it cannot be. */
export function realOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** Whether `path` is there and is not a symlink: the entries {@link premountHides} may take. */
export function isPlainEntry(path: string): boolean {
  try {
    return !lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

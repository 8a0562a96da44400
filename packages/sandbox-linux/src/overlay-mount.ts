import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { loadExeca } from './execa-lazy.js';
import { isWithin } from './rule-match.js';
import { findExecutable } from './tools.js';

/*
 * Writes captured in an overlay (the host model, docs/threat-model.md): every writable root of a run is mounted as
 * an overlay whose lower layer is the host directory and whose upper layer is a per-run directory
 * in the run folder. What the command writes lands in the upper layer only; after the command ends
 * upper-commit.ts judges each entry and commits the allowed ones. Nothing reaches the host before
 * it is judged.
 *
 * bubblewrap 0.8 has no `--overlay`, so a step before it mounts the overlays in a mount namespace
 * of its own and then execs bwrap there (same pid, so `--die-with-parent`, `--info-fd` and the pid
 * limit see bwrap as before):
 * - daemon run by root with the root map (root-map.ts, the default): no step of its own; the root
 *   map's python step mounts the same operands (`mountOperands`) with mount(2) and execs bwrap.
 * - daemon run by root without it: `unshare --mount --propagation private`, the mount made with
 *   the daemon's real credentials. A user namespace there would leave every file whose owner it does not map
 *   unable to be copied up (EOVERFLOW), measured.
 * - daemon run by an ordinary user: `unshare --map-root-user --mount` (the daemon's uid is 0 in a
 *   new user namespace, which may mount an overlay with `userxattr`), and bwrap then gets
 *   `--uid/--gid` so the command still sees the daemon's ids.
 * Options: `userxattr` (the only form an unprivileged mounter may use; root uses it too so the
 * upper layer reads the same either way), `redirect_dir=nofollow` (implied: renaming a directory
 * of the lower layer copies it, EXDEV then `mv`'s copy), `metacopy=off` (a chmod copies the data
 * too, so an upper file is always whole), `index=off`, `xino=off`.
 */

/** How a run keeps the command's writes away from the host until they are judged. */
export const HOST_MODELS = ['auto', 'overlay', 'look'] as const;
/**
 * One of {@link HOST_MODELS}: `overlay` requires the overlay (a run fails closed without it),
 * `look` keeps the look-based model (placeholders, landings undone after the fact), `auto` uses the
 * overlay where this kernel mounts it and says so in `probe()`.
 */
export type HostModel = (typeof HOST_MODELS)[number];

/**
 * The mount options of every run's overlays. `volatile` (Linux 5.10; an overlay in a user
 * namespace needs 5.11 anyway): without it, the overlay's unmount at the sandbox's end calls
 * sync_filesystem on the upper layer's file system, which writes out every dirty page of that
 * whole file system, the host's other programs' included. Each `true` then waited for the host's
 * writeback: with a program writing on the same file system, a run took 41 ms at the median and
 * 113-187 ms at p90, against 23-29 and 40-58 with `volatile` (bench `true-host-writer`). The
 * upper layer is a staging area judged after the command, never a place data must survive a
 * crash in (a run cut off is discarded), so its own syncs are skipped too; what is committed
 * reaches the disk before the result by a sync of the file systems that received it
 * (`syncCommitted`, service.ts).
 */
export const OVERLAY_OPTIONS = 'userxattr,metacopy=off,index=off,xino=off,volatile';

/** What marks the step's own failure on stderr (nothing of the command ran then). */
export const OVERLAY_FAILURE = 'aalis-overlay: ';

/** Exit status of the mount step when a mount failed. */
const MOUNT_FAILED = 125;

/**
 * The step before bwrap, as a shell program: mounts each `lower upper work` triple given as
 * arguments up to `--`, then execs the rest (bwrap and its arguments). Arguments, never text in
 * the program, so no path is ever parsed by the shell.
 */
const MOUNT_SCRIPT = `m=$1
u=$2
shift 2
aliases=
while [ "$1" != -- ]; do
  if [ "$4" != - ]; then "$m" --bind "$1" "$4" || { echo "${OVERLAY_FAILURE}cannot keep the host directory $1 reachable" >&2; exit ${MOUNT_FAILED}; }; aliases="$aliases
$4"; fi
  "$m" -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,${OVERLAY_OPTIONS}" "$1" || { echo "${OVERLAY_FAILURE}cannot mount an overlay on $1" >&2; exit ${MOUNT_FAILED}; }
  shift 4
done
shift
while [ "$1" != -- ]; do
  "$m" --bind "$1" "$2" || { echo "${OVERLAY_FAILURE}cannot bind the socket $2" >&2; exit ${MOUNT_FAILED}; }
  shift 2
done
shift
IFS='
'
for a in $aliases; do "$u" "$a" || { echo "${OVERLAY_FAILURE}cannot take down $a" >&2; exit ${MOUNT_FAILED}; }; done
exec "$@"`;

/** One writable root as an overlay: the host directory and its per-run layers. */
export interface OverlayRoot {
  /** The host directory (the lower layer, and where the overlay is mounted). */
  readonly root: string;
  readonly upper: string;
  readonly work: string;
  /**
   * Where the host directory stays reachable under the overlay (a bind made before it), for the
   * sockets in it: a unix socket is found by its inode, and the overlay's inode of a host socket
   * is not the bound one (connect() is refused), so each socket is bound back from here. Taken
   * down again before bwrap starts: through it the host directory's hidden files would be readable.
   */
  readonly lower: string;
}

/** A host socket inside an overlay root, bound back over the overlay's copy of its name. */
export interface SocketBind {
  readonly src: string;
  readonly dst: string;
}

/** The binds that keep `sockets` (real paths) reachable under the overlays that hold them. */
export function socketBinds(overlays: readonly OverlayRoot[], sockets: readonly string[]): SocketBind[] {
  const out: SocketBind[] = [];
  for (const sock of sockets) {
    const o = overlays.find((x) => isWithin(sock, x.root));
    if (o && sock !== o.root) out.push({ src: o.lower + sock.slice(o.root.length), dst: sock });
  }
  return out;
}

/** Characters the overlay's option string cannot carry in a path without escapes mount(8) does not give (libmount takes `"` as quoting). */
const UNSAFE_IN_OPTIONS = /[,:\\\n"]/;

/** Why a root cannot be an overlay, or undefined when it can. */
export function overlayRefusal(root: string): string | undefined {
  if (UNSAFE_IN_OPTIONS.test(root)) return `its path holds a character the overlay's options cannot carry (, : \\ " or a newline): ${JSON.stringify(root)}`;
  return undefined;
}

/**
 * Why the overlays of these roots cannot be mounted for runs whose folders go under `tmp`, or
 * undefined: a layer inside a lower directory is refused by the kernel, and a
 * file system mounted under a root would be hidden by the overlay (its lower layer is the root's
 * own file system only). `mountinfo`: the text of /proc/self/mountinfo.
 */
export function overlayConflict(roots: readonly string[], tmp: string, mountinfo: string): string | undefined {
  for (const r of roots) {
    // the layers inside the lower layer: the kernel refuses (a root beside the run folders under the same temp dir is fine)
    if (isWithin(tmp, r)) return `the daemon's temp directory ${tmp} lies in the writable root ${r}, so the overlay's layers cannot be kept out of it`;
  }
  for (const line of mountinfo.split('\n')) {
    const point = line.split(' ')[4];
    if (!point) continue;
    const at = point.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
    const under = roots.find((r) => at !== r && isWithin(at, r));
    if (under) return `a file system is mounted at ${at}, under the writable root ${under}: an overlay of the root would hide it`;
  }
  return undefined;
}

/** The writable roots that get an overlay: every write root, a root nested in another one once (the outer overlay holds it). */
export function overlayRootsOf(policy: SandboxPolicy): string[] {
  const all = [...new Set(policy.write)].sort();
  return all.filter((r) => !all.some((o) => o !== r && isWithin(r, o)));
}

/** The overlays of one run, their layers under `runDir/overlay/<n>/` (never inside a writable root). */
export function planOverlays(roots: readonly string[], runDir: string): OverlayRoot[] {
  return roots.map((root, i) => ({ root, upper: join(runDir, String(i), 'upper'), work: join(runDir, String(i), 'work'), lower: join(runDir, String(i), 'lower') }));
}

/**
 * Makes each overlay's upper and work directories (mode 0700: only the daemon reads what the
 * command wrote), in the thread pool: a directory
 * made on a journalling file system can wait for the journal's commit behind another program's
 * fsync (the audit log's, every call), and on the daemon's thread that wait held its event loop.
 * The `lower` alias point is made only for a root that needs one ({@link prepareAliases}): every
 * directory a run makes and removes is an inode allocated and freed, about 12 a root with the
 * overlay's own (README, "This machine's file system").
 */
export async function prepareLayers(overlays: readonly OverlayRoot[]): Promise<void> {
  await Promise.all(overlays.flatMap((o) => [o.upper, o.work].map((d) => mkdir(d, { recursive: true, mode: 0o700 }))));
}

/** Whether a socket bind reaches the host directory under `o` through its `lower` alias (the mount step then binds the root there). */
export function isAliased(o: OverlayRoot, binds: readonly SocketBind[]): boolean {
  return binds.some((b) => b.src.startsWith(`${o.lower}/`));
}

/** Makes the `lower` alias point of each overlay a socket bind needs ({@link isAliased}), after {@link prepareLayers}. */
export async function prepareAliases(overlays: readonly OverlayRoot[], binds: readonly SocketBind[]): Promise<void> {
  await Promise.all(overlays.filter((o) => isAliased(o, binds)).map((o) => mkdir(o.lower, { mode: 0o700 })));
}

/** The binaries of the mount step, found on the daemon's PATH (never the command's). */
export interface OverlayTools {
  readonly unshare: string;
  readonly mount: string;
  readonly umount: string;
}

/** The mount step's binaries, or undefined where util-linux's unshare or mount is missing. */
export function findOverlayTools(unshare = 'unshare'): OverlayTools | undefined {
  const u = findExecutable(unshare);
  const m = findExecutable('mount') ?? findExecutable('/usr/bin/mount') ?? findExecutable('/bin/mount');
  const um = findExecutable('umount') ?? findExecutable('/usr/bin/umount') ?? findExecutable('/bin/umount');
  return u && m && um ? { unshare: u, mount: m, umount: um } : undefined;
}

/**
 * The mount step's operands, which the shell step below and the root map's python step
 * (root-map.helper.ts) read alike: each root's `lower upper work alias` (alias `-` when no socket
 * in it needs the host directory kept reachable), `--`, each socket bind's `src dst`, `--`.
 */
export function mountOperands(overlays: readonly OverlayRoot[], binds: readonly SocketBind[] = []): string[] {
  return [...overlays.flatMap((o) => [o.root, o.upper, o.work, isAliased(o, binds) ? o.lower : '-']), '--', ...binds.flatMap((b) => [b.src, b.dst]), '--'];
}

/**
 * The mount step's argv, which ends with `--` and is followed by bwrap and its arguments:
 * util-linux's unshare as described above, a shell, and one mount(8) per entry. A root daemon's
 * runs mount from the root map's step instead (root-map.ts), which already runs and saves the
 * shell and the mount(8) execs.
 */
export function overlayStep(tools: OverlayTools, overlays: readonly OverlayRoot[], binds: readonly SocketBind[] = [], uid = process.getuid?.() ?? 0): string[] {
  const ns = uid === 0 ? ['--mount', '--propagation', 'private'] : ['--map-root-user', '--mount'];
  return [tools.unshare, ...ns, '--', '/bin/sh', '-c', MOUNT_SCRIPT, 'aalis-overlay', tools.mount, tools.umount, ...mountOperands(overlays, binds)];
}

/** bwrap's extra arguments under the mount step: an ordinary user's ids, which the step's user namespace renamed to 0. */
export function innerIdArgs(uid = process.getuid?.() ?? 0, gid = process.getgid?.() ?? 0): string[] {
  return uid === 0 ? [] : ['--uid', String(uid), '--gid', String(gid)];
}

/**
 * Removes a run's layers. The overlay leaves its work directory mode 000 and the command may have
 * made directories it cannot be listed in, so every directory is made listable first; never follows
 * a symlink (rmSync does not). Layers as a run leaves them go by name first ({@link removeKnownLayers}).
 */
export function removeLayers(dir: string): void {
  if (removeKnownLayers(dir)) return;
  try {
    makeListable(Buffer.from(dir));
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // deeper than PATH_MAX: rm(1) walks relative to each directory
    execFileSync('rm', ['-rf', '--', dir], { stdio: 'ignore' });
  }
}

/**
 * What one root's layers hold once its overlay is gone and its upper layer committed: the three
 * directories {@link prepareLayers} made, and what the kernel made in the work directory at the
 * mount (`work`, and, for a `volatile` overlay, `work/incompat/volatile/dirty`), deepest first.
 */
const LAYER_ENTRIES = ['work/work/incompat/volatile/dirty', 'work/work/incompat/volatile', 'work/work/incompat', 'work/work', 'work', 'upper', 'lower'] as const;
/** The kernel's directories above, mode 000: an ordinary user must make them searchable to remove what is in them (root need not). */
const SEALED = ['work/work', 'work/work/incompat', 'work/work/incompat/volatile'] as const;

/**
 * Removes `dir` (a run's `overlay` folder: one folder per root, named by its index) entry by entry
 * by name, when it holds no more than {@link LAYER_ENTRIES}: about 8 calls a root, where the walk
 * below (a look, a listing and a failed removal at each directory first) made 40; a daemon's run
 * has ten roots. False, with whatever was removed gone, as soon as anything is not as expected
 * (an upper layer that kept writes, a name it does not know): the walk below takes the rest.
 */
export function removeKnownLayers(dir: string): boolean {
  try {
    const sealed = (process.geteuid?.() ?? 0) !== 0;
    for (const n of readdirSync(dir)) {
      if (!/^\d{1,6}$/.test(n)) return false;
      const root = join(dir, n);
      if (sealed) for (const d of SEALED) tryEntry(() => chmodSync(join(root, d), 0o700));
      for (const e of LAYER_ENTRIES) tryEntry(() => (e.endsWith('/dirty') ? unlinkSync : rmdirSync)(join(root, e)));
      rmdirSync(root);
    }
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** Runs `step`, an entry's removal or chmod: one already absent is fine (an overlay never mounted has no `work/work`), any other error is thrown. */
function tryEntry(step: () => void): void {
  try {
    step();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** Every directory under `p` made listable, by bytes so a name that is not UTF-8 is reached too. */
function makeListable(p: Buffer): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(p);
  } catch {
    return;
  }
  if (!st.isDirectory()) return;
  if ((st.mode & 0o700) !== 0o700) chmodSync(p, 0o700);
  for (const n of readdirSync(p, { encoding: 'buffer' })) makeListable(Buffer.concat([p, Buffer.from('/'), n]));
}

/** Whether overlays work here, and why not. */
export interface OverlayProbe {
  readonly ok: boolean;
  readonly detail: string;
  readonly fix?: string;
}

const probed = new Map<string, Promise<OverlayProbe>>();

/**
 * Mounts one overlay the way a run would (in a throw-away mount namespace, under `tmp`) and writes
 * through it; once per process for each temp directory and unshare. Never throws.
 */
export function probeOverlay(tmp: string, unshare = 'unshare'): Promise<OverlayProbe> {
  const key = `${tmp}\0${unshare}`;
  const known = probed.get(key);
  if (known) return known;
  const probe = (async (): Promise<OverlayProbe> => {
    const tools = findOverlayTools(unshare);
    if (!tools) return { ok: false, detail: 'unshare or mount (util-linux) is not installed', fix: 'sudo apt-get install -y util-linux mount' };
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmp, 'aalis-overlay-probe-'));
      const lower = join(dir, 'lower');
      mkdirSync(lower);
      const [o] = planOverlays([lower], dir);
      await prepareLayers([o!]);
      const step = overlayStep(tools, [o!]);
      const execa = await loadExeca();
      const r = await execa(step[0]!, [...step.slice(1), '/bin/sh', '-c', 'echo x > "$0/probe"', lower], { reject: false, timeout: 10_000, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, extendEnv: false });
      const wrote = r.exitCode === 0 && readdirSync(o!.upper).includes('probe') && !readdirSync(lower).includes('probe');
      if (wrote) return { ok: true, detail: `writes are captured in an overlay per writable root and judged before they reach the host (${process.getuid?.() === 0 ? 'mounted as root in a mount namespace of its own' : 'mounted in an unprivileged user namespace'})` };
      return {
        ok: false,
        detail: `this kernel did not mount an overlay for the sandbox (${String(r.stderr).trim() || `exit ${r.exitCode}`}): new landings are undone after the command instead of prevented`,
        fix: 'a kernel with overlayfs that user namespaces may mount (Linux 5.11 or newer), or run the daemon as root (with Linux 5.10 or newer: the overlay is mounted `volatile`)',
      };
    } catch (e) {
      return { ok: false, detail: `the overlay probe failed: ${(e as Error).message}`, fix: 'see `aalis doctor`' };
    } finally {
      if (dir) removeLayers(dir);
    }
  })();
  probed.set(key, probe);
  return probe;
}

/**
 * Takes `answer` as this process's overlay probe for `tmp` and `unshare`, unless one was already
 * started: the answer of a probe cached for this same host (probe-cache.ts, whose key covers the
 * temp directory and the mount step's binaries), so a short-lived process mounts no probe overlay.
 */
export function seedOverlayProbe(tmp: string, unshare: string | undefined, answer: OverlayProbe): void {
  const key = `${tmp}\0${unshare ?? 'unshare'}`;
  if (!probed.has(key)) probed.set(key, Promise.resolve(answer));
}

/** Forgets the probe's answer (tests). */
export function forgetOverlayProbe(): void {
  probed.clear();
}

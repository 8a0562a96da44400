import { readFileSync, statSync } from 'node:fs';
import type { SandboxCheck } from '@aalis/api-reach';
import { loadExeca } from './execa-lazy.js';
import { mountOperands } from './overlay-mount.js';
import { ROOT_MAP_PY, USER_STEP_PY } from './root-map.helper.js';
import { findPython } from './system-interpreters.js';

/*
 * A root daemon's commands never run as the host's uid 0 (README "The command's host uid"): the
 * step in root-map.helper.ts puts bwrap in a user namespace whose 0 is an unused host id range,
 * over a view in which every file system that allows it is idmapped through that namespace, so
 * host files keep their owners inside and what the command writes is owned as before (root's files
 * stay root's, new files are root's), while the kernel sees the process as the mapped id.
 */

/** The `rootUidMap` settings: `on` (default) maps a root daemon's commands, failing closed where it cannot; `off` runs them as the host's root. */
export const ROOT_UID_MAPS = ['on', 'off'] as const;
/** One of {@link ROOT_UID_MAPS}. */
export type RootUidMap = (typeof ROOT_UID_MAPS)[number];

/** How many ids the namespace maps (0..65535 inside: every id a distribution's packages use). */
export const ROOT_MAP_COUNT = 65536;

/**
 * Where the search for a free range starts: above the ranges systemd hands to containers
 * (0x00080000..0x6FFFFFFF) and below 2^31 (tools that read ids as signed).
 */
export const ROOT_MAP_FIRST = 0x70000000;

/** How many candidate ranges are tried before giving up. */
const CANDIDATES = 256;

/** A host id range. */
export interface IdRange {
  readonly base: number;
  readonly count: number;
}

/** The files whose ids and ranges a mapped range must not meet. */
export interface IdFiles {
  readonly passwd: string;
  readonly group: string;
  readonly subuid: string;
  readonly subgid: string;
}

function readOr(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

/** The host's account and sub-id files as text (a missing one is empty). */
export function hostIdFiles(): IdFiles {
  return { passwd: readOr('/etc/passwd'), group: readOr('/etc/group'), subuid: readOr('/etc/subuid'), subgid: readOr('/etc/subgid') };
}

/** Every id and range the files name: uid and gid of each account and group, each sub-id range. */
function takenRanges(files: IdFiles): IdRange[] {
  const out: IdRange[] = [];
  for (const line of `${files.passwd}\n${files.group}`.split('\n')) {
    const f = line.split(':');
    for (const v of [f[2], f[3]]) if (v && /^\d+$/.test(v)) out.push({ base: Number(v), count: 1 });
  }
  for (const line of `${files.subuid}\n${files.subgid}`.split('\n')) {
    const f = line.split(':');
    if (f[1] && f[2] && /^\d+$/.test(f[1]) && /^\d+$/.test(f[2])) out.push({ base: Number(f[1]), count: Number(f[2]) });
  }
  return out;
}

/**
 * The first range of {@link ROOT_MAP_COUNT} ids from {@link ROOT_MAP_FIRST} up, in steps of its
 * size, that no account, group or sub-id range (`/etc/subuid`, `/etc/subgid`: other containers')
 * meets; undefined when none of the candidates is free.
 */
export function chooseRootRange(files: IdFiles = hostIdFiles()): IdRange | undefined {
  const taken = takenRanges(files);
  for (let i = 0; i < CANDIDATES; i++) {
    const base = ROOT_MAP_FIRST + i * ROOT_MAP_COUNT;
    if (!taken.some((t) => t.base < base + ROOT_MAP_COUNT && base < t.base + t.count)) return { base, count: ROOT_MAP_COUNT };
  }
  return undefined;
}

const ID_FILES = ['/etc/passwd', '/etc/group', '/etc/subuid', '/etc/subgid'];
/** The last range chosen from the host's files, and the files' state then (inode, size, mtime of each). */
let chosen: { readonly stamp: string; readonly range: IdRange | undefined } | undefined;

/**
 * {@link chooseRootRange} from the host's files, chosen again only when one of them changed (a
 * run read and parsed all four on the daemon's thread; a stat of each tells whether they changed).
 */
function hostRootRange(): IdRange | undefined {
  const stamp = ID_FILES.map((p) => {
    try {
      const st = statSync(p, { bigint: true });
      return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch {
      return '-';
    }
  }).join('/');
  if (chosen?.stamp !== stamp) chosen = { stamp, range: chooseRootRange() };
  return chosen.range;
}

/** What marks the step's own failure on stderr (nothing of the command ran then). */
export const ROOT_MAP_FAILURE = 'aalis-rootmap: ';

/**
 * The step's argv, followed by bwrap and its arguments. `mustMap`: paths whose file systems must be
 * idmapped (the writable roots); `mounts`: the overlays' mount operands (overlay-mount.ts
 * `mountOperands`), mounted by this step; `hides`: the hidden entries it mounts instead of bwrap
 * (premount.ts `premountHides`); `readOnly`: the step makes every host mount read-only before the
 * overlays (premount.ts `readOnlyByStep`); python runs isolated (`-I -S`), and with the fixed launch
 * environment (launch-env.ts), so nothing of the command's environment loads code into it.
 */
export function rootMapStep(python: string, range: IdRange, mustMap: readonly string[], mounts: readonly string[] = mountOperands([]), hides: readonly string[] = [], readOnly = false): string[] {
  return [python, '-I', '-S', '-c', ROOT_MAP_PY, String(range.base), String(range.count), ...(readOnly ? ['+ro'] : []), ...mustMap, '--', ...mounts, ...hides, '--'];
}

/**
 * An ordinary user's overlay step as python (`user_step`, root-map.helper.ts), for a daemon whose
 * kept-alive launcher runs it in its run's child: the same mounts as the shell step
 * (overlay-mount.ts `overlayStep`), by mount(2), without unshare(1), a shell and one mount(8) per
 * entry. `mounts`: overlay-mount.ts `mountOperands`; bwrap's argv follows.
 */
export function userOverlayStep(python: string, mounts: readonly string[]): string[] {
  return [python, '-I', '-S', '-c', USER_STEP_PY, ...mounts];
}

/** What a root daemon's runs need for the mapping: the interpreter and the range, or why not. */
export type RootMapPlan = { readonly ok: true; readonly python: string; readonly range: IdRange } | { readonly ok: false; readonly detail: string; readonly fix: string };

/** The check's name in `probe()`. */
export const HOST_UID_CHECK = 'host-uid';

const OPT_OUT = 'or set `rootUidMap: off` in the sandbox-linux config to run commands as the host\'s root (not recommended)';

/** The interpreter and a free range, or what is missing. `python`: the interpreter to use (default: the system's python3). */
export function planRootMap(python?: string): RootMapPlan {
  const py = findPython(python);
  if (!py) return { ok: false, detail: `${python ?? 'python3'} is not installed (or is a script, not the interpreter), and it makes the idmapped mounts`, fix: `sudo apt-get install -y python3, ${OPT_OUT}` };
  const range = hostRootRange();
  if (!range) return { ok: false, detail: `no free range of ${ROOT_MAP_COUNT} ids from ${ROOT_MAP_FIRST} up (accounts or /etc/subuid take them all)`, fix: `free a range in /etc/subuid, ${OPT_OUT}` };
  return { ok: true, python: py, range };
}

const probed = new Map<string, Promise<SandboxCheck>>();

/**
 * Whether a root daemon's commands are mapped here: runs the step once per process (per
 * interpreter) in front of `id -u` and reads the uid the host sees. Never throws.
 */
export function probeRootMap(setting: RootUidMap, uid = process.geteuid?.() ?? 0, python?: string): Promise<SandboxCheck> {
  if (uid !== 0) return Promise.resolve({ name: HOST_UID_CHECK, ok: true, detail: `sandboxed commands run as host uid ${uid}, never root` });
  if (setting === 'off') {
    return Promise.resolve({
      name: HOST_UID_CHECK,
      ok: false,
      detail: "rootUidMap is off: the daemon runs as root, so sandboxed commands run as the host's uid 0 (without capabilities, /proc/sys and /sys read-only)",
      fix: 'remove `rootUidMap: off` from the sandbox-linux config, or run the daemon as an ordinary user',
    });
  }
  const key = python ?? '';
  const known = probed.get(key);
  if (known) return known;
  const check = (async (): Promise<SandboxCheck> => {
    const plan = planRootMap(python);
    if (!plan.ok) return { name: HOST_UID_CHECK, ok: false, detail: `commands of this root daemon cannot be mapped off the host's root, so every run fails closed: ${plan.detail}`, fix: plan.fix };
    const step = rootMapStep(plan.python, plan.range, []);
    const execa = await loadExeca();
    const r = await execa(step[0]!, [...step.slice(1), '/bin/sh', '-c', 'cat /proc/self/uid_map; stat -c %u /'], { reject: false, timeout: 10_000, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, extendEnv: false, cwd: '/' });
    const [map, owner] = String(r.stdout).trim().split('\n');
    const seen = map?.trim().split(/\s+/);
    if (r.exitCode === 0 && seen?.[0] === '0' && seen[1] === String(plan.range.base) && owner === '0') {
      return { name: HOST_UID_CHECK, ok: true, detail: `the daemon runs as root; sandboxed commands run as uid 0 inside, which is host uid ${plan.range.base} (ids 0..${plan.range.count - 1} mapped to ${plan.range.base}..${plan.range.base + plan.range.count - 1}, over idmapped mounts)` };
    }
    const why = String(r.stderr).trim() || `exit ${r.exitCode}, saw ${JSON.stringify(r.stdout)}`;
    return { name: HOST_UID_CHECK, ok: false, detail: `commands of this root daemon cannot be mapped off the host's root (idmapped mounts need Linux 5.12+ and file systems that allow them), so every run fails closed: ${why}`, fix: `a kernel and file system with idmapped mounts, ${OPT_OUT}` };
  })();
  probed.set(key, check);
  return check;
}

/** Forgets the probe's answer (tests). */
export function forgetRootMapProbe(): void {
  probed.clear();
}

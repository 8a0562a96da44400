import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync, statfsSync, statSync } from 'node:fs';
import type { SandboxProbe } from '@aalis/api-reach';
import { readFileNoFollow, writeFileAtomic } from '@aalis/core';
import { z } from 'zod';
import { findSystemTool } from './loopback-filter.js';
import { findOverlayTools, OVERLAY_OPTIONS, type OverlayProbe } from './overlay-mount.js';
import type { ProbeTargets } from './probe.js';
import { findExecutable } from './tools.js';

/** How long a probe that found everything working is trusted by later processes (10 minutes). */
export const PROBE_CACHE_TTL_MS = 10 * 60_000;

/** Where the last good probe is kept, so a short-lived process (each `aalis exec`) starts no probe sandboxes. */
export interface ProbeCacheOptions {
  /** A file in a directory no sandboxed command can write (the data directory). */
  readonly file: string;
  readonly ttlMs?: number;
}

/** Kernel settings a probe's answer depends on; a change of any makes the cached probe another machine's. */
const KNOBS = [
  '/proc/sys/kernel/random/boot_id',
  '/proc/sys/kernel/unprivileged_userns_clone',
  '/proc/sys/user/max_user_namespaces',
  '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
  '/proc/sys/kernel/seccomp/actions_avail',
  '/proc/self/cgroup',
];

function fileId(path: string | undefined): string {
  if (path === undefined) return 'missing';
  try {
    const s = statSync(path);
    return `${path}:${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return `${path}:gone`;
  }
}

function knob(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '-';
  }
}

/** The user and mount namespaces this process is in: another container or namespace is another machine. */
function namespaces(): string {
  return ['user', 'mnt'].map((ns) => {
    try {
      return readlinkSync(`/proc/self/ns/${ns}`);
    } catch {
      return `${ns}:-`;
    }
  }).join(',');
}

/**
 * What the overlay probe's answer depends on besides the host's fingerprint: the temp directory the
 * probe mounts under (its real place, file system and type: another mount there may not take an
 * overlay), the mount options, and the mount step's binaries (util-linux's unshare, mount, umount:
 * an upgrade changes them).
 */
export function overlayFingerprint(tmp: string, unshare = 'unshare'): string {
  let place: string;
  try {
    const s = statSync(tmp);
    place = `${tmp}:${s.dev}:${s.ino}:${statfsSync(tmp).type}`;
  } catch {
    place = `${tmp}:gone`;
  }
  const tools = findOverlayTools(unshare);
  // the options the probe mounted with: a cached answer for other options (before `volatile`) is not this one's
  const parts = [place, OVERLAY_OPTIONS, ...(tools ? [tools.unshare, tools.mount, tools.umount].map(fileId) : ['no-tools'])];
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}

/**
 * What the probe's answer depends on, as one hash: the binaries it checks (path, inode, size,
 * mtime: an upgrade changes them), the boot (a reboot or another kernel), the namespace and
 * seccomp knobs, this process's cgroup, user and mount namespaces, uid, the pid limit and the filter.
 */
export function hostFingerprint(t: ProbeTargets): string {
  const parts = [
    fileId(findExecutable(t.bwrap)),
    fileId(findExecutable(t.slirp4netns)),
    fileId(findSystemTool(t.nft)),
    fileId(findSystemTool('nsenter')),
    ...KNOBS.map(knob),
    namespaces(),
    String(t.uid ?? process.getuid?.() ?? -1),
    String(t.pidLimit),
    createHash('sha256').update(t.filter).digest('hex'),
  ];
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}

const CachedSchema = z.object({
  v: z.literal(1),
  key: z.string(),
  at: z.number(),
  probe: z.object({
    backend: z.literal('linux'),
    available: z.literal(true),
    checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string(), fix: z.string().optional() })),
  }),
  /** The overlay probe's own answer, kept when the probe made one (not under hostModel `look`). */
  overlay: z.object({ ok: z.boolean(), detail: z.string(), fix: z.string().optional() }).optional(),
});

/** A cached probe: the service's answer and, when it was probed, the overlay probe's. */
export interface CachedProbe {
  readonly probe: SandboxProbe;
  readonly overlay?: OverlayProbe;
}

/** The cached probe for `key` when one younger than the TTL found everything working; never throws. */
export async function loadCachedProbe(cache: ProbeCacheOptions, key: string, now: number): Promise<CachedProbe | undefined> {
  try {
    const parsed = CachedSchema.safeParse(JSON.parse((await readFileNoFollow(cache.file, 1 << 20)).toString('utf8')));
    if (!parsed.success || parsed.data.key !== key) return undefined;
    const { at, probe, overlay } = parsed.data;
    if (!(at <= now && now - at < (cache.ttlMs ?? PROBE_CACHE_TTL_MS))) return undefined;
    return overlay === undefined ? { probe } : { probe, overlay };
  } catch {
    return undefined;
  }
}

/** Keeps a probe that found everything working; a failed write only means the next process probes again. */
export async function storeProbe(cache: ProbeCacheOptions, key: string, probe: SandboxProbe, now: number, overlay?: OverlayProbe): Promise<void> {
  if (!probe.available) return;
  await writeFileAtomic(cache.file, `${JSON.stringify({ v: 1, key, at: now, probe, ...(overlay === undefined ? {} : { overlay }) })}\n`, { mode: 0o600, createParents: true, dirMode: 0o700 }).catch(() => {});
}

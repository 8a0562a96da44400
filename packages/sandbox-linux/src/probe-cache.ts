import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { SandboxProbe } from '@aalis/api-reach';
import { readFileNoFollow, writeFileAtomic } from '@aalis/core';
import { z } from 'zod';
import { findSystemTool } from './loopback-filter.js';
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

/**
 * What the probe's answer depends on, as one hash: the binaries it checks (path, inode, size,
 * mtime: an upgrade changes them), the boot (a reboot or another kernel), the namespace and
 * seccomp knobs, this process's cgroup, uid, the pid limit and the filter.
 */
export function hostFingerprint(t: ProbeTargets): string {
  const parts = [
    fileId(findExecutable(t.bwrap)),
    fileId(findExecutable(t.slirp4netns)),
    fileId(findSystemTool(t.nft)),
    fileId(findSystemTool('nsenter')),
    ...KNOBS.map(knob),
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
});

/** The cached probe for `key` when one younger than the TTL found everything working; never throws. */
export async function loadCachedProbe(cache: ProbeCacheOptions, key: string, now: number): Promise<SandboxProbe | undefined> {
  try {
    const parsed = CachedSchema.safeParse(JSON.parse((await readFileNoFollow(cache.file, 1 << 20)).toString('utf8')));
    if (!parsed.success || parsed.data.key !== key) return undefined;
    const { at, probe } = parsed.data;
    return at <= now && now - at < (cache.ttlMs ?? PROBE_CACHE_TTL_MS) ? probe : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps a probe that found everything working; a failed write only means the next process probes again. */
export async function storeProbe(cache: ProbeCacheOptions, key: string, probe: SandboxProbe, now: number): Promise<void> {
  if (!probe.available) return;
  await writeFileAtomic(cache.file, `${JSON.stringify({ v: 1, key, at: now, probe })}\n`, { mode: 0o600, createParents: true, dirMode: 0o700 }).catch(() => {});
}

import type { SandboxProbe } from '@aalis/api-reach';
import { readFileNoFollow, removeFile, writeFileAtomic } from '@aalis/core';
import { z } from 'zod';

/** How long a probe that found everything working is trusted by later processes (10 minutes). */
export const PROBE_CACHE_TTL_MS = 10 * 60_000;

/** Where a docker sandbox keeps its last good probe, so a short-lived process does not start a probe container. */
export interface ProbeCacheOptions {
  /** A file in a directory no sandboxed command can write (the daemon's or the CLI's data directory). */
  readonly file: string;
  readonly ttlMs?: number;
}

const CachedProbeSchema = z.object({
  v: z.literal(1),
  /** What the probe was made for: the engine, the images and the uid; another key is another machine state. */
  key: z.string(),
  at: z.number(),
  probe: z.object({
    backend: z.literal('docker'),
    available: z.literal(true),
    checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string(), fix: z.string().optional() })),
  }),
});

/**
 * The cached probe for `key`, when one younger than the TTL says everything works; otherwise
 * `undefined` (missing, unreadable, another key, too old, from the future). Never throws.
 */
export async function loadCachedProbe(cache: ProbeCacheOptions, key: string, now: number): Promise<{ probe: SandboxProbe; at: number } | undefined> {
  try {
    const parsed = CachedProbeSchema.safeParse(JSON.parse((await readFileNoFollow(cache.file, 1 << 20)).toString('utf8')));
    if (!parsed.success || parsed.data.key !== key) return undefined;
    const { at, probe } = parsed.data;
    if (at > now || now - at >= (cache.ttlMs ?? PROBE_CACHE_TTL_MS)) return undefined;
    const checks = probe.checks.map((c) => (c.name === 'baseline' ? { ...c, detail: `${c.detail} (checked ${new Date(at).toISOString()}, cached in ${cache.file})` } : c));
    return { probe: { ...probe, checks }, at };
  } catch {
    return undefined;
  }
}

/** Keeps a probe that found everything working; a failed write only means the next process probes again. */
export async function storeProbe(cache: ProbeCacheOptions, key: string, probe: SandboxProbe, now: number): Promise<void> {
  if (!probe.available) return;
  await writeFileAtomic(cache.file, `${JSON.stringify({ v: 1, key, at: now, probe })}\n`, { mode: 0o600, createParents: true, dirMode: 0o700 }).catch(() => {});
}

/** Forgets the cached probe (a run the engine refused: the machine changed). */
export async function dropCachedProbe(cache: ProbeCacheOptions): Promise<void> {
  await removeFile(cache.file).catch(() => false);
}

import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { isWithin } from './rule-match.js';

/*
 * The overlays are mounted `volatile` (overlay-mount.ts): their unmount no longer writes out the
 * upper layer's whole file system at every run's end, and the command's own fsyncs there are
 * no-ops. What a run committed to the host is then made durable here, once per file system that
 * received it, before the run's result: a run that wrote nothing syncs nothing, and one that did
 * pays what every run paid before. A command that fsyncs its files (git, a database) finds them on
 * the disk after the result, as it would have outside the sandbox.
 */

/** The writable roots that hold at least one of `committed` (host paths): the file systems to sync. */
export function rootsReceiving(roots: readonly string[], committed: readonly string[]): string[] {
  return roots.filter((root) => committed.some((p) => isWithin(p, root)));
}

/**
 * Syncs the file system of each of `roots` with `sync` (coreutils, found by the caller on the
 * daemon's PATH; undefined when it is not there): one `sync --file-system` per device, syncfs(2).
 * Answers a line for stderr naming what could not be synced, or '' when every one was. A root gone
 * meanwhile is skipped: nothing of it is left to write out. Each call is its own child processes,
 * started from the caller's thread without blocking it: not a job of a shared host lane, where one
 * run's sync of much data (seconds, its command's own doing) held up every other run's result.
 */
export async function syncFileSystems(roots: readonly string[], sync: string | undefined): Promise<string> {
  const devices = new Map<number, string>();
  for (const root of roots) {
    try {
      const dev = (await stat(root)).dev;
      if (!devices.has(dev)) devices.set(dev, root);
    } catch {
      // gone: nothing to sync
    }
  }
  if (devices.size === 0) return '';
  const failed = (
    await Promise.all(
      [...devices.values()].map(
        (root) =>
          new Promise<string | undefined>((resolve) => {
            if (!sync) return resolve(`${root} (coreutils sync is not installed)`);
            execFile(sync, ['--file-system', '--', root], { env: {}, timeout: 120_000 }, (e, _stdout, stderr) => resolve(e ? `${root} (${String(stderr).trim() || e.message})` : undefined));
          }),
      ),
    )
  ).filter((f): f is string => f !== undefined);
  return failed.length === 0 ? '' : `aalis: the writes committed under ${failed.join(', ')} were not synced to the disk: they reach it with the kernel's writeback, as any program's unsynced writes do\n`;
}

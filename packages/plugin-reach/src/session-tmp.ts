import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * Every conversation has a session temp of its own (TMPDIR and /tmp in the sandbox, kept between
 * its commands). They were all made directly in the data directory's `tmp`: with 100,000
 * conversations, that directory held 100,000 entries, and every sandboxed run lists each ancestor
 * of its roots (sandbox-linux's scan: a `.env` symlink there hides its target). A new conversation
 * changes the listing, so the next runs listed it again: about 200 ms a run at 100,000. They now
 * go one level down, by the first two hex digits of their name: `tmp/<2 hex>/session-<24 hex>`,
 * so the listings a run may make hold about 256 and a 256th of the temps.
 */

/** The conversation's session temp under `base` (the data directory's `tmp`, or a binding's): `base/<2 hex>/session-<24 hex>`, from the conversation's root id. */
export function sessionTmpOf(base: string, root: string): string {
  const hex = createHash('sha256').update(root).digest('hex').slice(0, 24);
  return join(base, hex.slice(0, 2), `session-${hex}`);
}

/**
 * Makes the session temp of `root` (mode 0700). One from before the shards (`base/session-<hex>`),
 * a real directory, is moved to its new place first, so what a conversation kept there stays its.
 * Resolves to its path.
 */
export async function ensureSessionTmp(base: string, root: string): Promise<string> {
  const path = sessionTmpOf(base, root);
  // until the background move of every one is done: what it left is left for good
  if (!migrated.has(base)) {
    void migrateSessionTmps(base);
    const shard = join(path, '..');
    const before = join(base, path.slice(shard.length + 1));
    await mkdir(shard, { recursive: true, mode: 0o700 });
    try {
      // only a real directory of ours is moved (never what a symlink there names)
      if ((await lstat(before)).isDirectory()) await rename(before, path);
    } catch {
      // none from before (ENOENT), or the new one holds something already (ENOTEMPTY): the new one is the temp
    }
  }
  await mkdir(path, { recursive: true, mode: 0o700 });
  return path;
}

const migrations = new Map<string, Promise<void>>();
/** Bases whose background move has ended. */
const migrated = new Set<string>();

/**
 * Moves every session temp from before the shards in `base` to its shard: once per process and
 * base, started by the first {@link ensureSessionTmp} there and not waited for (100,000 of them
 * take seconds). One its conversation moved meanwhile, or whose new place holds something, is left.
 */
export function migrateSessionTmps(base: string): Promise<void> {
  let running = migrations.get(base);
  if (running === undefined) {
    running = (async () => {
      let names: string[];
      try {
        names = await readdir(base);
      } catch {
        return; // no temp yet
      }
      for (const name of names) {
        const hex = /^session-([0-9a-f]{24})$/.exec(name)?.[1];
        if (hex === undefined) continue;
        const from = join(base, name);
        try {
          if (!(await lstat(from)).isDirectory()) continue; // never what a symlink names
          await mkdir(join(base, hex.slice(0, 2)), { recursive: true, mode: 0o700 });
          await rename(from, join(base, hex.slice(0, 2), name));
        } catch {
          // moved by its conversation meanwhile (ENOENT), or the new one holds something: left
        }
      }
      migrated.add(base);
    })();
    migrations.set(base, running);
  }
  return running;
}

import { execFileSync } from 'node:child_process';
import { decodeName } from '@aalis/core';
import { splitBytes, unescapeOctal } from './opaque-dirs.js';
import { findExecutable } from './tools.js';

/*
 * The overlay keeps its own bookkeeping in `user.overlay.*` xattrs of the upper layer (`origin`
 * on a copy-up, `impure` on a directory holding one, `opaque`, `redirect`). A rename commit would
 * carry them onto the host, where they name inodes of a layer that is gone and would mislead any
 * later overlay of that directory. So an entry carrying one is committed by copy (which copies no
 * xattr), never by rename; a directory holding one is made anew and filled entry by entry.
 */

/** The entries of an upper layer that carry a `user.overlay.*` xattr, as paths relative to it, or why they could not all be read. */
export type OverlayXattrs = { readonly ok: true; readonly paths: ReadonlySet<string> } | { readonly ok: false; readonly reason: string };

/** Reads which entries under `upper` carry an overlay xattr (never following a symlink). */
export function readOverlayXattrs(upper: string, getfattr = findExecutable('getfattr')): OverlayXattrs {
  if (!getfattr) return { ok: false, reason: 'getfattr (the attr package) is not installed' };
  let out: Buffer;
  try {
    out = execFileSync(getfattr, ['-R', '-P', '-m', '^user\\.overlay\\.', '.'], { cwd: upper, env: { LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  } catch (e) {
    // a path past PATH_MAX: what lies there is unknown
    return { ok: false, reason: `getfattr failed: ${(e as Error).message.split('\n')[0]}` };
  }
  const paths = new Set<string>();
  for (const record of out.toString('latin1').split('\n\n')) {
    const file = record.split('\n').find((l) => l.startsWith('# file: '));
    if (!file) continue;
    const raw = unescapeOctal(Buffer.from(file.slice('# file: '.length), 'latin1'));
    paths.add(raw.toString('latin1') === '.' ? '' : splitBytes(raw).map(decodeName).join('/'));
  }
  return { ok: true, paths };
}

/** Whether the entry at `rel` (a directory: or anything under it) may be renamed onto the host as it is. */
export function renameKeepsNoXattr(x: OverlayXattrs, rel: string, tree: boolean): boolean {
  if (!x.ok) return false;
  if (x.paths.has(rel)) return false;
  if (!tree) return true;
  const prefix = `${rel}/`;
  for (const p of x.paths) if (p.startsWith(prefix)) return false;
  return true;
}

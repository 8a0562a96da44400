import { execFileSync } from 'node:child_process';
import { decodeName } from '@aalis/core';
import { findExecutable } from './tools.js';

/*
 * An overlay marks a directory of the upper layer "opaque" (xattr `user.overlay.opaque` = "y" with
 * `userxattr`) when it replaced a directory of the lower layer as a whole (`rm -rf d; mkdir d`):
 * then the lower directory's entries are gone, with no whiteout each. Node cannot read xattrs, so
 * `getfattr` (the attr package) lists them, once per commit and only when a directory of the upper
 * layer also exists on the host.
 */

/** The xattr an overlay mounted with `userxattr` sets on an opaque directory. */
export const OPAQUE_XATTR = 'user.overlay.opaque';

/**
 * The opaque directories of an upper layer, as paths relative to it ('' for the layer itself),
 * names decoded as the walk decodes them; `complete` false when some could not be read (a path past
 * PATH_MAX: ask {@link isOpaqueAt} for those); or why none could be read.
 */
export type OpaqueDirs = { readonly ok: true; readonly dirs: ReadonlySet<string>; readonly complete: boolean } | { readonly ok: false; readonly reason: string };

/** getfattr and /proc/self/mountinfo escape a backslash, space, control bytes and a few others as `\ooo`; other bytes come as they are. */
export function unescapeOctal(b: Buffer): Buffer {
  if (!b.includes(0x5c)) return b;
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    if (b[i] === 0x5c && i + 3 < b.length && /^[0-7]{3}$/.test(b.subarray(i + 1, i + 4).toString('latin1'))) {
      out.push(Number.parseInt(b.subarray(i + 1, i + 4).toString('latin1'), 8));
      i += 3;
    } else out.push(b[i]!);
  }
  return Buffer.from(out);
}

/** Reads every opaque directory under `upper` (never following a symlink: `-P`). */
export function readOpaqueDirs(upper: string, getfattr = findExecutable('getfattr')): OpaqueDirs {
  if (!getfattr) return { ok: false, reason: 'getfattr (the attr package) is not installed' };
  let out: Buffer;
  let complete = true;
  try {
    // relative to the layer, so the names printed are short and the layer's own path is '.'
    out = execFileSync(getfattr, ['-R', '-P', '-d', '-m', `^${OPAQUE_XATTR.replaceAll('.', '\\.')}$`, '.'], { cwd: upper, env: { LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  } catch (e) {
    // it walks by whole paths: one past PATH_MAX fails, and what it printed before still holds
    const stdout = (e as { stdout?: Buffer }).stdout;
    if (!Buffer.isBuffer(stdout)) return { ok: false, reason: `getfattr failed: ${(e as Error).message.split('\n')[0]}` };
    out = stdout;
    complete = false;
  }
  const dirs = new Set<string>();
  for (const record of out.toString('latin1').split('\n\n')) {
    const lines = record.split('\n').filter(Boolean);
    const file = lines.find((l) => l.startsWith('# file: '));
    if (!file || !lines.some((l) => l === `${OPAQUE_XATTR}="y"`)) continue;
    const raw = unescapeOctal(Buffer.from(file.slice('# file: '.length), 'latin1'));
    const rel = raw.toString('latin1') === '.' ? '' : splitBytes(raw).map(decodeName).join('/');
    dirs.add(rel);
  }
  return { ok: true, dirs, complete };
}

/** Whether the directory open at `fd` is opaque (true/false), or undefined when getfattr cannot tell. By descriptor, so any depth. */
export function isOpaqueAt(fd: number, getfattr = findExecutable('getfattr')): boolean | undefined {
  if (!getfattr) return undefined;
  try {
    const v = execFileSync(getfattr, ['--only-values', '-n', OPAQUE_XATTR, '/proc/self/fd/3'], { env: { LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe', fd] });
    return v.toString('latin1') === 'y';
  } catch (e) {
    return /No such attribute/.test(String((e as { stderr?: Buffer }).stderr ?? '')) ? false : undefined;
  }
}

/** A path's bytes split at each `/`, empty parts dropped. */
export function splitBytes(b: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= b.length; i++) {
    if (i === b.length || b[i] === 0x2f) {
      if (i > start) parts.push(b.subarray(start, i));
      start = i + 1;
    }
  }
  return parts;
}

import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { checkPathLength, checkPathText, pathRefusalOf } from './path-refused.js';

/**
 * The real path of a target the way the reach contract asks: symlinks resolved and `..` folded;
 * for a target that does not exist yet, the nearest existing ancestor's real path joined with the
 * segments that do not exist (so a new landing file still matches by name). Relative paths are
 * taken from `base`. A path no file can have (a NUL byte, a lone surrogate, longer than the
 * system takes) is refused with a `PathRefusedError` before anything is looked up.
 */
export async function realPathOf(path: string, base: string = process.cwd()): Promise<string> {
  checkPathText(path);
  const absolute = resolve(base, path);
  checkPathLength(absolute);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      if (!isMissing(error)) throw pathRefusalOf(error, absolute) ?? error;
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** {@link realPathOf}, synchronously: for activation, where the lists' roots are resolved once. */
export function realPathOfSync(path: string, base: string = process.cwd()): string {
  checkPathText(path);
  const absolute = isAbsolute(path) ? resolve(path) : resolve(base, path);
  checkPathLength(absolute);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync.native(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      if (!isMissing(error)) throw pathRefusalOf(error, absolute) ?? error;
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(basename(current));
      current = parent;
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  // ENOTDIR: a segment is a file, so nothing below it exists either.
  return code === 'ENOENT' || code === 'ENOTDIR';
}

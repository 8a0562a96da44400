import { ReachInputError } from './errors.js';

/** Platforms whose file systems compare names without regard to case (APFS, NTFS by default). */
export function foldsCase(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || platform === 'win32';
}

/**
 * A path in the form rules compare: backslashes as slashes on win32, repeated slashes collapsed
 * (a leading `//` kept on win32 for UNC shares), no trailing slash except on a root. Case is left
 * alone; {@link foldPath} folds it.
 */
export function slashPath(path: string, platform: NodeJS.Platform): string {
  // The common case, a clean POSIX real path, costs two scans and no allocation.
  if (platform !== 'win32' && !path.includes('//') && (path.length < 2 || !path.endsWith('/'))) return path;
  let p = platform === 'win32' ? path.replaceAll('\\', '/') : path;
  const unc = platform === 'win32' && p.startsWith('//');
  p = p.replace(/\/{2,}/g, '/');
  if (unc) p = `/${p}`;
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

/** {@link slashPath}, then lower-cased on the platforms that compare without case. */
export function foldPath(path: string, platform: NodeJS.Platform): string {
  const p = slashPath(path, platform);
  return foldsCase(platform) ? p.toLowerCase() : p;
}

/** Whether a slashed path is absolute: `/…` everywhere, and `C:/…` or `//server/…` on win32. */
export function isAbsolutePath(slashed: string, platform: NodeJS.Platform): boolean {
  if (platform === 'win32') return /^[A-Za-z]:(\/|$)/.test(slashed) || slashed.startsWith('//');
  return slashed.charCodeAt(0) === 47;
}

const DOT_SEGMENT_OR_NUL = /(?:^|\/)\.\.?(?:\/|$)|\0/;

/**
 * Refuses a path that is not absolute or still has `.` / `..` segments: rules and requests are
 * real paths, and a relative or unresolved one would be judged against the wrong place.
 * Answers the path in {@link slashPath} form.
 */
export function assertRealPathShape(path: string, platform: NodeJS.Platform, what: string): string {
  if (typeof path !== 'string') {
    throw new ReachInputError('path', `${what} must be a path string, got ${typeof path}.`);
  }
  const p = slashPath(path, platform);
  if (!isAbsolutePath(p, platform)) {
    throw new ReachInputError(
      'path',
      `${what} '${path}' is not an absolute path; reach compares real paths only: resolve it (realpath of the nearest existing ancestor plus the rest) before asking.`,
    );
  }
  if (DOT_SEGMENT_OR_NUL.test(p)) {
    if (p.includes('\0')) {
      throw new ReachInputError('path', `${what} '${path}' contains a NUL byte; pass the real path of the target.`);
    }
    throw new ReachInputError('path', `${what} '${path}' has '.' or '..' segments; reach compares real paths only: resolve it before asking.`);
  }
  return p;
}

/** The directory a root covers, as a prefix: `/a/b` covers `/a/b/…`, `/` and `C:` cover everything under them. */
export function prefixOf(foldedRoot: string): string {
  return foldedRoot.endsWith('/') ? foldedRoot : `${foldedRoot}/`;
}

/** Whether `path` is `root` or under it (both already folded). `/a/b` does not cover `/a/bc`. */
export function isUnder(foldedPath: string, foldedRoot: string): boolean {
  return foldedPath === foldedRoot || foldedPath.startsWith(prefixOf(foldedRoot));
}

/**
 * Whether real path `path` is `root` or lies under it, compared the way rules compare on
 * `platform`: repeated and trailing slashes do not matter (`/a/` covers `/a` and `/a/b`), `/a`
 * does not cover `/ab`, `/` covers everything, and on darwin and win32 case does not matter.
 * The one "is under" of the project; both paths must be real paths already.
 */
export function pathIsUnder(path: string, root: string, platform: NodeJS.Platform): boolean {
  return isUnder(foldPath(path, platform), foldPath(root, platform));
}

/** Joins a relative part to a base without producing `//`: a home of `/` gives `/.ssh`. */
export function joinPath(base: string, relative: string): string {
  let b = base;
  while (b.endsWith('/') || b.endsWith('\\')) b = b.slice(0, -1);
  return `${b}/${relative}`;
}

/** The last segment of a slashed path. */
export function baseName(slashed: string): string {
  const i = slashed.lastIndexOf('/');
  return i < 0 ? slashed : slashed.slice(i + 1);
}

export { escapePattern } from '@aalis/core';

import { DarwinProfileError } from './darwin-profile-error.js';

// On macOS /tmp, /var and /etc are symlinks into /private; Seatbelt matches the path the kernel
// resolved, so a rule spelled /var/folders/... would never match anything. The first segment is
// compared without case because the boot volume is case-insensitive.
const PRIVATE_ROOTS = ['tmp', 'var', 'etc'] as const;

/**
 * `path` spelled the way the macOS kernel reports it: absolute, no trailing slash, `/tmp`,
 * `/var` and `/etc` under `/private`, repeated slashes collapsed. Refuses relative paths and `.`
 * or `..` segments, since a rule that never matches is a silent hole when the rule is a deny.
 */
export function darwinPath(path: string, rule: string): string {
  if (!path.startsWith('/')) {
    throw new DarwinProfileError(path, rule, 'is not an absolute path', 'pass the real path (resolved, absolute) of the file or directory');
  }
  // Repeated and trailing slashes are spelling (api-reach collapses them too); `.` and `..` are not.
  const collapsed = path.replace(/\/{2,}/g, '/');
  const trimmed = collapsed.length > 1 ? collapsed.replace(/\/$/, '') : collapsed;
  const segments = trimmed.split('/').slice(1);
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    throw new DarwinProfileError(path, rule, 'is not a resolved path (it has a "." or ".." segment)', 'pass the real path, as realpath returns it');
  }
  const first = segments[0]?.toLowerCase();
  if (first !== undefined && (PRIVATE_ROOTS as readonly string[]).includes(first)) {
    return `/private/${first}${trimmed.slice(1 + first.length)}`;
  }
  return trimmed;
}

/** A pattern's leading `^/tmp/`, `^/var/` or `^/etc/` respelled under `/private`, like {@link darwinPath}. */
export function darwinPatternPrefix(pattern: string): string {
  const match = /^\^(?:\/|\\\/)(tmp|var|etc)(?=\/|\\\/)/i.exec(pattern);
  if (match === null) return pattern;
  return `^/private/${match[1]!.toLowerCase()}${pattern.slice(match[0].length)}`;
}

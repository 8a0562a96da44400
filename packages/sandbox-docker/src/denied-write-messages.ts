import { isAbsolute, resolve } from 'node:path';

// How common tools report a write the kernel refused: coreutils, busybox, shells, Python, Node.
const PATTERNS = [
  /(?:cannot|can't) (?:touch|create|create directory|remove|write to|rename|move|make directory)[^'"\n/]*['"‘]?([^'"’\n:]+?)['"’]?: (?:Read-only file system|Permission denied|Operation not permitted)/g,
  /^(?:touch|mkdir|rm|mv|cp|ln|tee|dd|install|truncate): ['"‘]?([^'"’\n:]+?)['"’]?: (?:Read-only file system|Permission denied|Operation not permitted)$/gm,
  /([^\s'"‘:]+)['"’]?: Read-only file system$/gm,
  /\[Errno (?:30|13|1)\] (?:Read-only file system|Permission denied|Operation not permitted): ['"]([^'"]+)['"]/g,
  /EROFS: [^,\n]*?, \w+ '([^']+)'/g,
  /(?:EACCES|EPERM): [^,\n]*?, (?:mkdir|unlink|rename|rmdir|copyfile|symlink|link) '([^']+)'/g,
] as const;

/**
 * The paths a command's error output says the kernel refused to write (EROFS, EACCES, EPERM),
 * as absolute paths. It reads what the tools printed, so a tool that prints nothing is missed;
 * the post-run check of the writable roots catches the rest.
 */
export function deniedWritesInMessages(stderr: string, cwd: string): string[] {
  const found = new Set<string>();
  for (const pattern of PATTERNS) {
    for (const match of stderr.matchAll(pattern)) {
      const raw = match[1]?.trim();
      if (raw === undefined || raw === '') continue;
      const path = isAbsolute(raw) ? raw : resolve(cwd, raw);
      if (path.startsWith('/proc/') || path.startsWith('/sys/')) continue;
      found.add(path);
    }
  }
  return [...found];
}

import { existsSync, readFileSync } from 'node:fs';

/**
 * bwrap's read-only bind of `/` remounts every host mount under it, from the mount table it read
 * a moment before; a mount gone meanwhile (a container's overlay going away as it stops) fails
 * that remount. True when `stderr` is that failure and the mount is no longer on the host: a
 * fresh attempt (or probe) reads a table without it. Nothing ran in the sandbox then.
 */
export function vanishedHostMount(stderr: string, exists: (p: string) => boolean = existsSync, mounted: (p: string) => boolean = hostMountPoint): boolean {
  const path = /remount "\/newroot(\/[^"]*)"/.exec(stderr)?.[1];
  return path !== undefined && (!exists(path) || !mounted(path));
}

/**
 * The root map (root-map.helper.ts) clones every host mount, then moves each clone onto its place
 * in a namespace of its own; a mount gone between the two (a container's overlay going away as it
 * stops, on a docker host at any moment) fails the move, as does a table that kept changing through
 * its three tries. True for those failures when the mount is no longer on the host: a fresh launch
 * reads the table again. Nothing ran then (the root map runs before bwrap).
 */
export function vanishedRootMapMount(stderr: string, exists: (p: string) => boolean = existsSync, mounted: (p: string) => boolean = hostMountPoint): boolean {
  if (/^aalis-rootmap: the mount table kept changing while it was cloned/m.test(stderr)) return true;
  // a hidden entry the step mounts in bwrap's place (premount.ts) that was removed since the scan, as bwrap's own mount of it would have failed
  const hidden = /^aalis-rootmap: cannot hide the (?:file|directory) (\/[\s\S]*?): mount failed: /m.exec(stderr)?.[1]; // a name may hold a newline
  if (hidden !== undefined) return !exists(hidden);
  const path = /^aalis-rootmap: move_mount\((\/.*)\) failed: /m.exec(stderr)?.[1];
  return path !== undefined && (!exists(path) || !mounted(path));
}

/** `path` is a mount point on the host now (from /proc/self/mountinfo; unreadable counts as mounted, so nothing is retried on a guess). */
export function hostMountPoint(path: string): boolean {
  let info: string;
  try {
    info = readFileSync('/proc/self/mountinfo', 'latin1');
  } catch {
    return true;
  }
  // field 5 is the mount point, with space, tab, newline and backslash written as octal escapes
  const octal = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
  return info.split('\n').some((line) => octal(line.split(' ')[4] ?? '') === path);
}

import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The absolute path of an executable found on PATH (the daemon's, not the command's), or undefined.
 * A name found before is answered from memory (one access check that it is still executable) while
 * the PATH directories are unchanged: a run looks up bwrap, unshare, mount, umount and python, and
 * a walk of a 12-entry PATH for each cost ~70 access calls a run on the daemon's thread.
 */
export function findExecutable(name: string, path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'): string | undefined {
  if (name.startsWith('/')) return isExecutable(name) ? name : undefined;
  const stamp = pathStamp(path);
  const key = `${path}\0${name}`;
  const known = found.get(key);
  if (known && known.stamp === stamp && (known.path === undefined || isExecutable(known.path))) return known.path;
  let hit: string | undefined;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) {
      hit = candidate;
      break;
    }
  }
  found.set(key, { stamp, path: hit });
  return hit;
}

/** Names looked up before, by PATH and name: what was found, under which state of the PATH directories. */
const found = new Map<string, { readonly stamp: string; readonly path: string | undefined }>();
/** The PATH directories' state (each one's inode and mtime, which an entry added, removed or renamed in it changes), by PATH. */
const stamps = new Map<string, { readonly at: number; readonly stamp: string }>();
/** How long a PATH's directories are taken as unchanged before they are looked at again. */
const STAMP_MS = 1000;

function pathStamp(path: string): string {
  const now = performance.now();
  const known = stamps.get(path);
  if (known && now - known.at < STAMP_MS) return known.stamp;
  const parts: string[] = [];
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      const st = statSync(dir, { bigint: true });
      parts.push(`${st.dev}:${st.ino}:${st.mtimeNs}`);
    } catch {
      parts.push('-');
    }
  }
  const stamp = parts.join('/');
  stamps.set(path, { at: now, stamp });
  return stamp;
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A sysctl's value, or undefined where the kernel has no such knob. */
export function sysctl(name: string): string | undefined {
  try {
    return readFileSync(`/proc/sys/${name.replaceAll('.', '/')}`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The command that lets unprivileged user namespaces work on this machine, chosen by what the kernel has. */
export function userNamespaceFix(): string {
  if (sysctl('kernel.apparmor_restrict_unprivileged_userns') === '1') {
    return "allow bwrap to create user namespaces: add an AppArmor profile for /usr/bin/bwrap with 'userns,' or run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`";
  }
  if (sysctl('user.max_user_namespaces') === '0') return 'run `sudo sysctl -w user.max_user_namespaces=15000`';
  if (sysctl('kernel.unprivileged_userns_clone') === '0') return 'run `sudo sysctl -w kernel.unprivileged_userns_clone=1`';
  return 'enable unprivileged user namespaces (kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0, no AppArmor userns restriction for bwrap), or install bwrap setuid';
}

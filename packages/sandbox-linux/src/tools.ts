import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The absolute path of an executable found on PATH (the daemon's, not the command's), or undefined. */
export function findExecutable(name: string, path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'): string | undefined {
  if (name.startsWith('/')) return isExecutable(name) ? name : undefined;
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
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

import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The home directories of this machine's other accounts, as real paths of directories that exist:
 * root's and each person's account in the user database (`/etc/passwd`, uid 0 or from 1000 up,
 * not `nobody`; system accounts' homes are program folders) and each folder under `/home` (Linux)
 * or `/Users` (macOS, whose accounts live in Directory Services). Taken once at start, like the rest
 * of the lists: an account made later is seen at the next start.
 */
export function otherHomesOf(userHome: string, platform: NodeJS.Platform, passwd = readOr('/etc/passwd')): string[] {
  const candidates = new Set<string>();
  for (const line of passwd.split('\n')) {
    const fields = line.split(':');
    const uid = Number(fields[2]);
    const home = fields[5];
    const person = uid === 0 || (uid >= 1000 && uid !== 65534);
    if (person && home?.startsWith('/') && home !== '/') candidates.add(home);
  }
  const parent = platform === 'darwin' ? '/Users' : '/home';
  for (const name of listOr(parent)) candidates.add(join(parent, name));
  const homes = new Set<string>();
  for (const candidate of candidates) {
    const real = realDirOr(candidate);
    if (real !== undefined && real !== '/' && real !== userHome) homes.add(real);
  }
  return [...homes].sort();
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function listOr(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function realDirOr(path: string): string | undefined {
  try {
    const real = realpathSync.native(path);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

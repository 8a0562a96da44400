import { realpath } from 'node:fs/promises';
import { execa } from 'execa';
import { darwinPath } from './darwin-path.js';
import { DarwinProfileError } from './darwin-profile-error.js';

// macOS gives each user a temp folder (…/T) and a cache folder (…/C) under /private/var/folders,
// found with confstr(_CS_DARWIN_USER_TEMP_DIR / _CS_DARWIN_USER_CACHE_DIR), which ignores TMPDIR.
// Apple's tools use them whatever TMPDIR says: xcrun keeps xcrun_db in T, clang and swift keep
// their module caches in C. They are the system's twin of ~/Library/Caches, so a profile grants
// them exactly where the policy grants the owner's caches (the workspace tier), as write roots,
// under every landing and control rule. /private/tmp is never granted: it is shared by every user
// and app on the Mac and outlives the command; TMPDIR points at the session temp instead.

/** The per-user temp (`…/T`) and cache (`…/C`) folders, as real paths. */
export interface DarwinUserDirs {
  readonly temp: string;
  readonly cache: string;
}

const SHAPE = { temp: /^\/private\/var\/folders\/[^/]+\/[^/]+\/T$/, cache: /^\/private\/var\/folders\/[^/]+\/[^/]+\/C$/ } as const;
const GETCONF = { temp: 'DARWIN_USER_TEMP_DIR', cache: 'DARWIN_USER_CACHE_DIR' } as const;

/** `dirs` spelled the kernel's way, or a {@link DarwinProfileError}: anything but a per-user folder would widen the profile. */
export function checkUserDirs(dirs: DarwinUserDirs): DarwinUserDirs {
  const one = (key: keyof DarwinUserDirs): string => {
    const where = `userDirs.${key}`;
    const spelled = darwinPath(dirs[key], where);
    if (!SHAPE[key].test(spelled)) {
      throw new DarwinProfileError(dirs[key], where, `is not a per-user ${key} folder (/private/var/folders/…/${key === 'temp' ? 'T' : 'C'})`, `pass what \`getconf ${GETCONF[key]}\` prints, resolved with realpath`);
    }
    return spelled;
  };
  return { temp: one('temp'), cache: one('cache') };
}

/** Whether the policy grants the owner's caches (`…/Library/Caches` is a write root): then the per-user folders are granted too. */
export function grantsUserCaches(write: readonly string[]): boolean {
  // the sandbox's own cache home (api-reach toolchainCacheDirs) grants them as the whole folder did
  return write.some((root) => /\/library\/caches(?:\/aalis-sandbox)?$/i.test(darwinPath(root, 'write')));
}

/**
 * This user's folders from `getconf` (macOS only), resolved; undefined when either cannot be
 * found or is not shaped like one: a profile without them only refuses more.
 */
export async function findUserDirs(getconf = '/usr/bin/getconf'): Promise<DarwinUserDirs | undefined> {
  try {
    const ask = async (name: string) => realpath((await execa(getconf, [name], { timeout: 5_000, extendEnv: false, env: {} })).stdout.trim());
    return checkUserDirs({ temp: await ask(GETCONF.temp), cache: await ask(GETCONF.cache) });
  } catch {
    return undefined;
  }
}

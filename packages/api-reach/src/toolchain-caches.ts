import { joinPath, slashPath } from './path.js';

/** Toolchain caches under the user's home on every platform (npm, cargo, yarn berry, go, gradle, maven). */
const COMMON = ['.npm', '.cargo/registry', '.cargo/git', '.yarn/berry/cache', 'go/pkg/mod', '.gradle/caches', '.m2/repository'];
/** Per platform: `~/.cache` (pip, yarn classic, go build, pnpm metadata, …) on Linux, `~/Library/Caches` on macOS. */
const BY_PLATFORM: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ['.cache'],
  darwin: ['Library/Caches'],
  win32: ['AppData/Local/npm-cache', 'AppData/Local/pip/Cache'],
};

/**
 * Content stores that install by hard link: pnpm's store and bun's cache. Their files are the
 * same inodes as the `node_modules` they installed, the daemon's own install included, so a write
 * through the store path changes the daemon's code. They are never writable (the control plane
 * lists them); sandboxed commands get a store of their own instead ({@link sandboxStoreEnv}).
 */
const LINKED_STORES: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ['.local/share/pnpm/store', '.bun/install/cache'],
  darwin: ['Library/pnpm/store', '.bun/install/cache'],
  win32: ['AppData/Local/pnpm/store', '.bun/install/cache'],
};

/** Where sandboxed commands keep their own linked stores: inside a writable cache root, shared by the user's sessions. */
const SANDBOX_STORES: Partial<Record<NodeJS.Platform, string>> = {
  linux: '.cache/aalis-sandbox',
  darwin: 'Library/Caches/aalis-sandbox',
};

/**
 * The toolchain-cache allow list: directories package managers and build tools write during an
 * ordinary install or build. Without them such commands fail in the workspace tier's sandbox for
 * no good reason. Pass the result as `ReachInput.toolchainCaches`. The hard-linked stores
 * ({@link linkedStoreDirs}) are not on it.
 */
export function toolchainCacheDirs(userHome: string, platform: NodeJS.Platform): readonly string[] {
  const home = slashPath(userHome, platform);
  return [...COMMON, ...(BY_PLATFORM[platform] ?? [])].map((rel) => joinPath(home, rel));
}

/** The default places of the content stores that install by hard link (pnpm, bun): never writable. */
export function linkedStoreDirs(userHome: string, platform: NodeJS.Platform): readonly string[] {
  const home = slashPath(userHome, platform);
  return (LINKED_STORES[platform] ?? []).map((rel) => joinPath(home, rel));
}

/**
 * The environment that points a sandboxed command's pnpm, bun and uv at stores of their own, inside
 * a writable cache root: installs still work and link from there, and no write can reach the
 * inodes the host's installs share. Empty on a platform without a sandbox store place.
 */
export function sandboxStoreEnv(userHome: string, platform: NodeJS.Platform): Readonly<Record<string, string>> {
  const rel = SANDBOX_STORES[platform];
  if (rel === undefined) return {};
  const base = joinPath(slashPath(userHome, platform), rel);
  const pnpmStore = `${base}/pnpm-store`;
  // pnpm reads pnpm_config_* (npm_config_* in older releases); bun and uv their own variables.
  // uv links its cache's files into virtual environments, as pnpm does (the landing table has the
  // host's uv cache read-only inside)
  return { pnpm_config_store_dir: pnpmStore, npm_config_store_dir: pnpmStore, BUN_INSTALL_CACHE_DIR: `${base}/bun-cache`, UV_CACHE_DIR: `${base}/uv-cache` };
}

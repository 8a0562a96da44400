import { joinPath, slashPath } from './path.js';

/**
 * The caches package managers and build tools keep under a home (npm, cargo, yarn berry, go,
 * gradle, maven, and `~/.cache` or `~/Library/Caches`). A sandboxed command never writes the
 * host's: what it plants there runs on the host at the next install or build, and none of these
 * checks what it finds against a source of truth (found by attacks, 2026-12-05: a `.crate` in
 * cargo's registry/cache, corepack's pnpm, black's pickles, npm's index; the list of the parts
 * that execute never ended). They stay for homes the host never runs from
 * ({@link userCacheDirs}: the docker deployment's per-user homes).
 */
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

/**
 * The sandbox's own cache home: where sandboxed commands' tools cache (pointed there by
 * {@link sandboxStoreEnv}), shared by the user's sessions and never read by the host's tools.
 */
const SANDBOX_CACHE: Partial<Record<NodeJS.Platform, string>> = {
  linux: '.cache/aalis-sandbox',
  darwin: 'Library/Caches/aalis-sandbox',
};

/**
 * The toolchain-cache allow list, writable without asking in the workspace tier: the sandbox's
 * own cache home, where {@link sandboxStoreEnv} points package managers and build tools, so an
 * ordinary install or build caches without touching the host's caches (on a platform without a
 * sandbox, win32, the caches themselves). Pass the result as `ReachInput.toolchainCaches`.
 */
export function toolchainCacheDirs(userHome: string, platform: NodeJS.Platform): readonly string[] {
  const home = slashPath(userHome, platform);
  const own = SANDBOX_CACHE[platform];
  return own === undefined ? userCacheDirs(userHome, platform) : [joinPath(home, own)];
}

/**
 * Every cache directory tools keep under a home: for a home the host never runs from (the docker
 * deployment gives each person one), where they may all be writable.
 */
export function userCacheDirs(userHome: string, platform: NodeJS.Platform): readonly string[] {
  const home = slashPath(userHome, platform);
  return [...COMMON, ...(BY_PLATFORM[platform] ?? [])].map((rel) => joinPath(home, rel));
}

/** The default places of the content stores that install by hard link (pnpm, bun): never writable. */
export function linkedStoreDirs(userHome: string, platform: NodeJS.Platform): readonly string[] {
  const home = slashPath(userHome, platform);
  return (LINKED_STORES[platform] ?? []).map((rel) => joinPath(home, rel));
}

/**
 * The environment that points a sandboxed command's tools at the sandbox's own cache home
 * ({@link toolchainCacheDirs}): the XDG cache (pip, uv, go's build cache, corepack, pnpm's
 * metadata and dlx, poetry, playwright, black, …), npm's cache, yarn's (classic and berry), and
 * the stores pnpm and bun link from, whose files are the same inodes as the `node_modules` they
 * installed (so a write through them could never reach the host's installs). Installs and builds
 * keep working and cache across the user's sessions; the host's caches stay read-only and are not
 * used (a tool fetches again what only they held). Empty on a platform without a sandbox.
 */
export function sandboxStoreEnv(userHome: string, platform: NodeJS.Platform): Readonly<Record<string, string>> {
  const rel = SANDBOX_CACHE[platform];
  if (rel === undefined) return {};
  const base = joinPath(slashPath(userHome, platform), rel);
  const pnpmStore = `${base}/pnpm-store`;
  // pnpm reads pnpm_config_*, the others their own variables. Not npm_config_store_dir as well
  // (older pnpm read it): npm warned of an unknown setting at every command, and an older pnpm
  // without it meets the host's store read-only and fails, never writes it
  return {
    XDG_CACHE_HOME: `${base}/xdg`,
    npm_config_cache: `${base}/npm`,
    YARN_CACHE_FOLDER: `${base}/yarn`,
    YARN_GLOBAL_FOLDER: `${base}/yarn-berry`,
    pnpm_config_store_dir: pnpmStore,
    BUN_INSTALL_CACHE_DIR: `${base}/bun-cache`,
    UV_CACHE_DIR: `${base}/uv-cache`,
  };
}

import { joinPath, slashPath } from './path.js';

/** Toolchain caches under the user's home on every platform (npm, bun, cargo, yarn berry, go, gradle, maven). */
const COMMON = ['.npm', '.bun/install/cache', '.cargo/registry', '.cargo/git', '.yarn/berry/cache', 'go/pkg/mod', '.gradle/caches', '.m2/repository'];
/**
 * Per platform: `~/.cache` (pip, yarn classic, go build, pnpm metadata, …) on Linux,
 * `~/Library/Caches` on macOS, and pnpm's content store. Only the store, not pnpm's home: that
 * also holds the global binaries on PATH, which would be an execution landing.
 */
const BY_PLATFORM: Partial<Record<NodeJS.Platform, readonly string[]>> = {
  linux: ['.cache', '.local/share/pnpm/store'],
  darwin: ['Library/Caches', 'Library/pnpm/store'],
  win32: ['AppData/Local/npm-cache', 'AppData/Local/pnpm/store', 'AppData/Local/pip/Cache'],
};

/**
 * The toolchain-cache allow list: directories package managers and build tools write during an
 * ordinary install or build. Without them such commands fail in the workspace tier's sandbox for
 * no good reason. Pass the result as `ReachInput.toolchainCaches`.
 */
export function toolchainCacheDirs(userHome: string, platform: NodeJS.Platform): readonly string[] {
  const home = slashPath(userHome, platform);
  return [...COMMON, ...(BY_PLATFORM[platform] ?? [])].map((rel) => joinPath(home, rel));
}

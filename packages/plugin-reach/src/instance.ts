import { mkdirSync, realpathSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { aalisStateDir, type HostPaths, pathIsUnder, type ProtectedLists, protectedLists, toolchainCacheDirs, withRealRoots, type XdgBaseDirs, xdgBaseDirsOf } from '@aalis/api-reach';
import { otherHomesOf } from './other-homes.js';
import type { ReachConfig } from './plugin.js';
import { realPathOfSync } from './real-path.js';

/** This instance's paths and protected lists, as real paths taken once at activation. */
export interface ReachInstance {
  readonly platform: 'linux' | 'darwin' | 'win32';
  readonly paths: HostPaths;
  readonly userHome: string;
  readonly lists: ProtectedLists;
  /** The toolchain caches writable in the workspace tier. */
  readonly toolchainCaches: readonly string[];
}

/**
 * Lays out the data directory (`workspace/`, `tmp/`, `self/`, `logs/`), takes the real paths of
 * everything the lists are built from, and builds the three protected lists with
 * `withRealRoots`. Later symlink changes are not followed, as the contract says.
 */
export function reachInstanceOf(config: ReachConfig, kernelDataDir: string | undefined): ReachInstance {
  const platform = config.platform ?? (process.platform as 'linux' | 'darwin' | 'win32');
  const dataDir = config.data ?? kernelDataDir;
  if (dataDir === undefined) throw new Error("no data directory: set the plugin's 'data' or start the kernel with a dataDir");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const data = realPathOfSync(dataDir);
  for (const dir of ['workspace', 'tmp', 'self', 'logs']) mkdirSync(join(data, dir), { recursive: true, mode: 0o700 });
  const paths: HostPaths = {
    install: realPathOfSync(config.install),
    data,
    workspace: join(data, 'workspace'),
    tmp: join(data, 'tmp'),
    self: join(data, 'self'),
    logs: join(data, 'logs'),
    config: realPathOfSync(config.configFile ?? join(data, 'config.yaml')),
    secrets: join(data, 'secrets.yaml'),
    ...(config.deployment !== undefined ? { deployment: realPathOfSync(config.deployment) } : {}),
  };
  const userHome = realPathOfSync(config.userHome ?? homedir());
  const others = otherDataDirs(config.otherData, data);
  const base = protectedLists({
    paths,
    userHome,
    platform,
    form: config.form,
    codeDirs: config.codeDirs.map((d) => realPathOfSync(d)),
    ...(config.entry !== undefined ? { entry: realPathOfSync(config.entry) } : {}),
    ...userNameOf(),
    extraLandings: config.landings.map((l) => ('path' in l ? { path: realPathOfSync(l.path) } : l)),
    otherHomes: otherHomesOf(userHome, platform),
    // where every aalis command of this user keeps its state (the daemon registry, the undone folder)
    stateDir: realPathOfSync(aalisStateDir(process.env, homedir())),
    configHoldsSecrets: config.configHoldsSecrets,
    // the daemon's: the host tools that read the landings run with the user's environment
    xdg: reachXdgDirs(process.env),
  });
  const lists = withRealRoots(
    { ...base, control: [...base.control, ...others.map((path) => ({ path }))], denyRead: [...base.denyRead, ...others.map((path) => ({ path }))] },
    (path) => {
      try {
        return realpathSync.native(path);
      } catch {
        return undefined;
      }
    },
  );
  const toolchainCaches = toolchainCacheDirs(userHome, platform).map((d) => realPathOfSync(d));
  return { platform, paths, userHome, lists, toolchainCaches };
}

/**
 * The XDG base directories `env` sets (api-reach's `xdgBaseDirsOf`), as set (normalized) and,
 * where that differs, as real paths (one that does not exist yet: its nearest existing ancestor's,
 * as for any target): a set directory that is a symlink is a landing by both names, so a command
 * cannot repoint the link (found by an attack, h109: with only the real path named,
 * `rm cfg && ln -s evil cfg` moved neovim's config). The daemon's, and what `aalis doctor` shows.
 */
export function reachXdgDirs(env: Readonly<Record<string, string | undefined>>): XdgBaseDirs {
  return Object.fromEntries(Object.entries(xdgBaseDirsOf(env)).map(([kind, given]) => [kind, [...new Set(given.flatMap((dir) => [resolve(dir), realPathOfSync(dir)]))]]));
}

/** The login name, for landings named after it; none when the process has no passwd entry. */
function userNameOf(): { userName?: string } {
  try {
    return { userName: userInfo().username };
  } catch {
    return {};
  }
}

/**
 * The other data directories, as real paths: those that exist, are not this instance's own (which
 * has its own rules) and do not hold it (denying one of those whole would take this instance's
 * workspace away).
 */
function otherDataDirs(given: readonly string[], own: string): string[] {
  const out = new Set<string>();
  for (const dir of given) {
    let real: string;
    try {
      real = realpathSync.native(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // nothing there to read
      real = resolve(dir); // fail closed: a directory that cannot be resolved is denied as given
    }
    if (pathIsUnder(own, real, process.platform)) continue; // this instance's own data, or a directory holding it
    out.add(real);
  }
  return [...out];
}

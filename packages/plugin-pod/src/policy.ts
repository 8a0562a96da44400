import { join } from 'node:path';
import { ENV_FILES, type ProtectedLists, type SandboxPolicy } from '@aalis/api-reach';
import type { TaskDirs } from './task.js';

/** `*.pem` and `*.key`, which no task writes even in its own directory. */
const KEY_FILES = [{ pattern: '^.*\\.(?:pem|key)$' }] as const;

/**
 * The pod's own sandbox policy for one task: reads wherever the reach contract lets reads go
 * (everything but the deny-read list), writes only in the task's `work` (when writes are on) and
 * scratch directories, the landings and the control plane never, network as configured.
 */
export function podPolicyOf(dirs: TaskDirs, lists: ProtectedLists, options: { allowWrites: boolean; network: 'off' | 'on'; localPorts: readonly number[] }): SandboxPolicy {
  const write = options.allowWrites ? [dirs.work, dirs.scratch] : [dirs.scratch];
  return Object.freeze({
    readDeny: lists.denyRead,
    readAllowWithin: Object.freeze([dirs.base]),
    write: Object.freeze(write),
    writeDeny: lists.landing,
    writeExceptions: Object.freeze([]),
    controlDeny: Object.freeze([...lists.control, ENV_FILES, ...KEY_FILES]),
    network: options.network,
    localPorts: Object.freeze([...options.localPorts]),
    unixSockets: Object.freeze([...write]),
  });
}

/**
 * The whole environment of the task's code: nothing of the daemon's. TMPDIR, HOME, the XDG
 * directories and the language tools' caches all point into the task's scratch directory, so
 * temp files and caches land there.
 */
export function podEnvOf(dirs: TaskDirs, path: string): Record<string, string> {
  const tmp = join(dirs.scratch, 'tmp');
  const home = join(dirs.scratch, 'home');
  const cache = join(dirs.scratch, 'cache');
  return {
    PATH: path,
    HOME: home,
    TMPDIR: tmp,
    TMP: tmp,
    TEMP: tmp,
    XDG_CACHE_HOME: cache,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    PYTHONPYCACHEPREFIX: join(cache, 'pycache'),
    PYTHONUSERBASE: join(home, '.local'),
    PIP_CACHE_DIR: join(cache, 'pip'),
    npm_config_cache: join(cache, 'npm'),
    MPLCONFIGDIR: join(cache, 'matplotlib'),
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    POD_WORK_DIR: dirs.work,
  };
}

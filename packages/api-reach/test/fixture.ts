import type { HostPaths } from '../src/host-paths.js';
import type { ProtectedLists } from '../src/lists.js';
import { protectedLists } from '../src/protected-lists.js';
import type { ReachInput } from '../src/reach.js';
import type { AccessTier, BoundaryPolicy, ReachPrincipal } from '../src/tier.js';
import { toolchainCacheDirs } from '../src/toolchain-caches.js';

/** A realistic Linux install for tests and the benchmark: source form, data in `~/.aalis`. */
export const HOME = '/home/ada';
export const DATA = `${HOME}/.aalis`;
export const INSTALL = `${HOME}/src/aalis`;

export const PATHS: HostPaths = {
  install: INSTALL,
  data: DATA,
  workspace: `${DATA}/workspace`,
  tmp: `${DATA}/tmp`,
  self: `${DATA}/self`,
  logs: `${DATA}/logs`,
  config: `${DATA}/config.yaml`,
  secrets: `${DATA}/secrets.yaml`,
};

export const LISTS: ProtectedLists = protectedLists({
  paths: PATHS,
  userHome: HOME,
  platform: 'linux',
  form: 'source',
  codeDirs: [`${HOME}/plugins/linked`],
});

export const PROJECT = `${HOME}/proj`;
export const SESSION_TMP = `${DATA}/tmp/s1`;

/** A reach input for the project, one extra root, a worktree, a `.git` and a bare git directory. */
export function reachInput(principal: ReachPrincipal, tier: AccessTier, onBoundary: BoundaryPolicy, over: Partial<ReachInput> = {}): ReachInput {
  return {
    principal,
    tier,
    onBoundary,
    place: { home: PROJECT },
    binding: { extraRoots: [`${HOME}/extra`], worktrees: [`${HOME}/wt/feature`] },
    gitDirs: [`${PROJECT}/.git`, '/srv/repos/app.git'],
    sessionTmp: SESSION_TMP,
    localPorts: [7777],
    lists: LISTS,
    paths: PATHS,
    toolchainCaches: toolchainCacheDirs(HOME, 'linux'),
    ...over,
  };
}

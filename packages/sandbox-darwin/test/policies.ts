import { type HostPaths, protectedLists, resolveReach, type SandboxPolicy, sandboxPolicyOf, toolchainCacheDirs } from '@aalis/api-reach';

// The policies a Mac gets, built the way the daemon builds them: api-reach's darwin lists,
// resolveReach and sandboxPolicyOf, for the owner "ana" with her project in ~/src/app and the
// data directory ~/.aalis. Nothing is added by hand: whatever the real policy leaves out (the
// per-user temp and cache folders under /private/var/folders) shows here as it would on a Mac.

/** The owner's home on the fixture Mac. */
export const HOME = '/Users/ana';
/** The data directory. */
export const DATA = `${HOME}/.aalis`;
/** The session's project (its main directory, with a `.git`). */
export const PROJECT = `${HOME}/src/app`;
/** This session's temp. */
export const SESSION_TMP = `${DATA}/tmp/s-7f3a`;
/** The daemon's ports on the loopback. */
export const LOCAL_PORTS = [4680, 4681] as const;
/** What `getconf DARWIN_USER_TEMP_DIR` and `DARWIN_USER_CACHE_DIR` say on the fixture Mac, as real paths. */
export const USER_DIRS = { temp: '/private/var/folders/x1/abc123/T', cache: '/private/var/folders/x1/abc123/C' } as const;

const PATHS: HostPaths = {
  install: `${HOME}/aalis`,
  data: DATA,
  workspace: `${DATA}/workspace`,
  tmp: `${DATA}/tmp`,
  self: `${DATA}/self`,
  logs: `${DATA}/logs`,
  config: `${DATA}/config.yaml`,
  secrets: `${DATA}/secrets.yaml`,
  deployment: HOME,
};

/** api-reach's protected lists for this Mac. */
export const LISTS = protectedLists({ paths: PATHS, userHome: HOME, platform: 'darwin', form: 'source', codeDirs: [`${HOME}/plugins/extra`], entry: `${HOME}/aalis/bin/aalis.cjs` });

function policyOf(tier: 'readonly' | 'workspace'): SandboxPolicy {
  const reach = resolveReach({
    principal: 'owner',
    tier,
    onBoundary: 'ask',
    place: { home: PROJECT },
    gitDirs: [`${PROJECT}/.git`],
    sessionTmp: SESSION_TMP,
    localPorts: LOCAL_PORTS,
    lists: LISTS,
    paths: PATHS,
    toolchainCaches: toolchainCacheDirs(HOME, 'darwin'),
  });
  return sandboxPolicyOf(reach);
}

/** The readonly tier: nothing writable but the session temp, network off. */
export const readonlyPolicy: SandboxPolicy = policyOf('readonly');

/** The workspace tier: the project, its git dir, the toolchain caches, the session temp; network on minus the daemon's ports. */
export const workspacePolicy: SandboxPolicy = policyOf('workspace');

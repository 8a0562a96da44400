import { join } from 'node:path';
import { type HostPaths, protectedLists, resolveReach, type SandboxPolicy, sandboxPolicyOf, toolchainCacheDirs } from '@aalis/api-reach';
import type { Scene } from './scene.testing.js';

/** The host paths of a scene's instance: data in `data/`, the install in `install/`. */
export function scenePaths(scene: Scene): HostPaths {
  return {
    install: join(scene.root, 'install'),
    data: scene.data,
    workspace: join(scene.data, 'workspace'),
    tmp: join(scene.data, 'tmp'),
    self: join(scene.data, 'self'),
    logs: join(scene.data, 'logs'),
    config: join(scene.data, 'config.yaml'),
    secrets: join(scene.data, 'secrets.yaml'),
  };
}

/**
 * The workspace-tier policy of a session in the scene's workspace, built the way the reach plugin
 * builds it (protectedLists → resolveReach → sandboxPolicyOf), with the toolchain caches writable
 * and the user named `ada`.
 */
export function reachPolicyOf(scene: Scene, over: { readonly gitDirs?: readonly string[]; readonly extraLandings?: readonly { path: string }[]; readonly otherHomes?: readonly string[] } = {}): SandboxPolicy {
  const paths = scenePaths(scene);
  const lists = protectedLists({ paths, userHome: scene.home, platform: 'linux', form: 'source', codeDirs: [], userName: 'ada', extraLandings: over.extraLandings ?? [], otherHomes: over.otherHomes ?? [] });
  const reach = resolveReach({
    principal: 'owner',
    tier: 'workspace',
    onBoundary: 'ask',
    place: { home: scene.ws },
    gitDirs: over.gitDirs ?? [join(scene.ws, '.git')],
    sessionTmp: scene.sessionTmp,
    localPorts: [],
    lists,
    paths,
    toolchainCaches: toolchainCacheDirs(scene.home, 'linux'),
  });
  return sandboxPolicyOf(reach);
}

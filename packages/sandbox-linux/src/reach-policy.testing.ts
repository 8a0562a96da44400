import { dirname, join, resolve } from 'node:path';
import { type ExtraLanding, type HostPaths, protectedLists, resolveReach, type SandboxPolicy, sandboxPolicyOf, toolchainCacheDirs } from '@aalis/api-reach';
import { ENVRC_MAX_BYTES, envrcReferences, gitConfigEntries, gitConfigProgramPaths, readRegularSync } from '@aalis/core';
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
export function reachPolicyOf(
  scene: Scene,
  over: { readonly gitDirs?: readonly string[]; readonly extraLandings?: readonly ExtraLanding[]; readonly otherHomes?: readonly string[]; readonly userHome?: string } = {},
): SandboxPolicy {
  const paths = scenePaths(scene);
  const userHome = over.userHome ?? scene.home;
  const lists = protectedLists({ paths, userHome, platform: 'linux', form: 'source', codeDirs: [], userName: 'ada', extraLandings: over.extraLandings ?? [], otherHomes: over.otherHomes ?? [] });
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
    toolchainCaches: toolchainCacheDirs(userHome, 'linux'),
  });
  return sandboxPolicyOf(reach);
}

/**
 * What the reach plugin adds to the landings for every call in the main directory `ws` (its
 * `hooksPathLandings` and `envrcLandingsOf`, which this package may not import): the main
 * repository's core.hooksPath and the programs its config names by path, and what the `.envrc`
 * files at and above `ws` load. With {@link reachPolicyOf}'s `extraLandings`, the daemon's policy.
 */
export function mainDirLandings(ws: string, home: string): ExtraLanding[] {
  const out: ExtraLanding[] = [];
  const entries = gitConfigEntries(join(ws, '.git', 'config'), home);
  for (const program of gitConfigProgramPaths(entries, home, ws)) out.push({ path: program });
  for (const e of entries) if (e.section === 'core' && e.subsection === undefined && e.key === 'hookspath' && e.value) out.push({ path: resolve(ws, e.value) });
  for (let dir = ws; ; dir = dirname(dir)) {
    const envrc = join(dir, '.envrc');
    const read = readRegularSync(envrc, { maxBytes: ENVRC_MAX_BYTES, follow: true });
    if (read.kind === 'read') {
      const refs = envrcReferences(envrc, read.bytes.toString('utf8'), home, process.env);
      for (const path of refs.paths) out.push({ path });
      for (const pattern of refs.patterns) out.push({ pattern });
    }
    if (dirname(dir) === dir) return out;
  }
}

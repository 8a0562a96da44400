import { join } from 'node:path';
import { type SandboxService, sandbox } from '@aalis/api-reach';
import { definePlugin } from '@aalis/core';
import { createDarwinSandbox } from '@aalis/sandbox-darwin';
import { createLinuxSandbox } from '@aalis/sandbox-linux';

/**
 * The sandbox service of a backend. Docker needs an image: `AALIS_DOCKER_IMAGE`. Linux run by root:
 * `AALIS_ROOT_UID_MAP=off` opts out of mapping commands off the host's uid 0 (sandbox-linux README). `cacheDir` (in
 * the data directory, which no sandboxed command can write) keeps the backend's last good probe
 * for ten minutes, so a later process (each `aalis exec`) does not probe again while it is fresh.
 */
export async function sandboxOf(backend: 'linux' | 'darwin' | 'docker', env: NodeJS.ProcessEnv = process.env, cacheDir?: string): Promise<SandboxService> {
  switch (backend) {
    case 'linux':
      // AALIS_ROOT_UID_MAP=off: a root daemon's commands run as the host's uid 0 (anything else keeps the map, which fails closed)
      return createLinuxSandbox({ ...(cacheDir !== undefined ? { probeCache: { file: join(cacheDir, 'linux-probe.json') } } : {}), ...(env.AALIS_ROOT_UID_MAP === 'off' ? { rootUidMap: 'off' as const } : {}) });
    case 'darwin':
      return createDarwinSandbox();
    case 'docker': {
      const { dockerSandboxFromEnv } = await import('./docker-backend.js');
      return await dockerSandboxFromEnv(env, cacheDir);
    }
  }
}

/** A plugin providing `sandbox` with the given service. */
export function sandboxPlugin(service: SandboxService) {
  return definePlugin({ name: `sandbox-${service.backend}`, provides: [sandbox], apply: (ctx) => ctx.provide(sandbox, service) });
}

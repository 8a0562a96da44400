import { type SandboxService, sandbox } from '@aalis/api-reach';
import { definePlugin } from '@aalis/core';
import { createDarwinSandbox } from '@aalis/sandbox-darwin';
import { createLinuxSandbox } from '@aalis/sandbox-linux';

/** The sandbox service of a backend. Docker needs an image: `AALIS_DOCKER_IMAGE`. */
export async function sandboxOf(backend: 'linux' | 'darwin' | 'docker', env: NodeJS.ProcessEnv = process.env): Promise<SandboxService> {
  switch (backend) {
    case 'linux':
      return createLinuxSandbox();
    case 'darwin':
      return createDarwinSandbox();
    case 'docker': {
      const { dockerSandboxFromEnv } = await import('./docker-backend.js');
      return await dockerSandboxFromEnv(env);
    }
  }
}

/** A plugin providing `sandbox` with the given service. */
export function sandboxPlugin(service: SandboxService) {
  return definePlugin({ name: `sandbox-${service.backend}`, provides: [sandbox], apply: (ctx) => ctx.provide(sandbox, service) });
}

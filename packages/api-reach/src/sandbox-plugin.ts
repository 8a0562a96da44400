import { definePlugin } from '@aalis/core';
import { type SandboxService, sandbox } from './sandbox.js';

/**
 * A kernel plugin (`sandbox-<backend>`) providing `sandbox` with a backend's service. The one
 * wrapper every backend goes through: a backend exports only its service factory, so the daemon,
 * `aalis exec` and tests build the service the same way and need no plugin config of their own.
 * When the kernel stops, the service is closed (`close`): its kept writes, timers and threads go.
 */
export function sandboxPlugin(service: SandboxService) {
  return definePlugin({
    name: `sandbox-${service.backend}`,
    provides: [sandbox],
    apply: (ctx) => {
      ctx.provide(sandbox, service);
      return async () => {
        await service.close?.();
      };
    },
  });
}

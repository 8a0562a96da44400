import { sandbox } from '@aalis/api-reach';
import { definePlugin } from '@aalis/core';
import { createDarwinSandbox } from './darwin-sandbox.js';

/**
 * Provides the `sandbox` service with the macOS backend. It starts on any platform: off macOS the
 * service it provides probes unavailable and refuses every command, so the daemon fails closed.
 */
export const darwinSandboxPlugin = definePlugin({
  name: 'sandbox-darwin',
  provides: [sandbox],
  apply(ctx) {
    ctx.provide(sandbox, createDarwinSandbox());
  },
});

import type { Kernel } from '@aalis/core';
import { type PodRouteHandler, pod, podPlugin, podRoutes } from '@aalis/plugin-pod';

export type { PodRouteHandler };

/** The pod as the daemon starts it: its plugin, and its routes once the kernel runs. */
export interface PodModule {
  readonly plugin: typeof podPlugin;
  /** The pod's HTTP API (`/api/pod/…`) and panel (`/pod`); `undefined` when the pod did not start. */
  routes(kernel: Kernel): PodRouteHandler | undefined;
}

/**
 * The pod, imported like any other dependency of the CLI (it is one): no dynamic import, no
 * guessing at what a module exports. The kernel still starts it as an optional plugin, so a pod
 * that fails to start leaves the rest of the daemon serving.
 */
export async function loadPod(): Promise<PodModule> {
  return {
    plugin: podPlugin,
    routes(kernel) {
      const service = kernel.maybe(pod);
      return service === undefined ? undefined : podRoutes(service);
    },
  };
}

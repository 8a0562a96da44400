import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kernel, ServiceDescriptor } from '@aalis/core';

/** Answers a request under `/api/pod/` or `/pod`; `false` when it is not one of its routes. */
export type PodRouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

/** What the daemon takes from `@aalis/plugin-pod`, each part only if that version exports it. */
export interface PodModule {
  readonly plugin: unknown;
  /** The pod's HTTP API (`/api/pod/…`) and panel (`/pod`), once the kernel runs; `undefined` when not exported. */
  routes(kernel: Kernel): PodRouteHandler | undefined;
}

function isPlugin(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'plugin' && typeof (value as { apply?: unknown }).apply === 'function';
}

function isDescriptor(value: unknown): value is ServiceDescriptor<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

/**
 * Loads the pod package if it is installed and exports a plugin; `undefined` otherwise. The
 * pod is optional: a daemon without it serves everything else.
 */
export async function loadPod(): Promise<PodModule | undefined> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import('@aalis/plugin-pod')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!isPlugin(mod.podPlugin)) return undefined;
  const { podRoutes, pod } = mod;
  return {
    plugin: mod.podPlugin,
    routes(kernel) {
      if (typeof podRoutes !== 'function' || !isDescriptor(pod)) return undefined;
      const service = kernel.maybe(pod);
      return service === undefined ? undefined : (podRoutes as (service: unknown) => PodRouteHandler)(service);
    },
  };
}

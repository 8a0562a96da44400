import type { z } from 'zod';
import type { PluginContext } from './context.js';
import type { ServiceDescriptor } from './service.js';

/** Undoes what a plugin did; may be async. */
export type Disposer = () => void | Promise<void>;

/** A descriptor of any service type, as plugin lists hold them. */
// biome-ignore lint/suspicious/noExplicitAny: descriptors of any service type are accepted in lists
export type AnyService = ServiceDescriptor<any>;

/** What a plugin declares: its services, its needs, its config schema and how it starts. */
export interface PluginSpec<Schema extends z.ZodType = z.ZodType<unknown>> {
  /** Unique among the kernel's plugins; error messages name it. */
  readonly name: string;
  /** Services this plugin provides with `ctx.provide`; each must be provided by the end of `apply`. */
  readonly provides?: readonly AnyService[];
  /** Services this plugin cannot run without; it starts after their providers. */
  readonly inject?: readonly AnyService[];
  /** Services this plugin uses when present; it starts after their providers if there are any. */
  readonly optional?: readonly AnyService[];
  /** Validated before `apply`; a bad config fails this plugin alone. */
  readonly config?: Schema;
  /** Starts the plugin; may return a disposer or register some with `ctx.onDispose`. */
  // biome-ignore lint/suspicious/noConfusingVoidType: apply may return nothing, sync or async
  apply(ctx: PluginContext, config: z.output<Schema>): void | Disposer | Promise<void | Disposer>;
}

/** A plugin: its spec, frozen. */
export type Plugin<Schema extends z.ZodType = z.ZodType<unknown>> = Readonly<PluginSpec<Schema>> & {
  readonly kind: 'plugin';
};

/** Declares a plugin. The kernel orders plugins by what they inject and provide. */
export function definePlugin<Schema extends z.ZodType = z.ZodType<unknown>>(
  spec: PluginSpec<Schema>,
): Plugin<Schema> {
  if (typeof spec.name !== 'string' || spec.name.trim() === '') {
    throw new TypeError('definePlugin: a plugin needs a non-empty name.');
  }
  if (typeof spec.apply !== 'function') {
    throw new TypeError(`definePlugin: plugin '${spec.name}' needs an apply(ctx, config) function.`);
  }
  return Object.freeze({ ...spec, kind: 'plugin' as const });
}

import { KernelError } from './errors.js';
import type { EventBus, KernelEventName, KernelEventPayload } from './events.js';
import type { Disposer } from './plugin.js';
import type { ServiceDescriptor } from './service.js';

/** What a plugin sees of the kernel while it runs. */
export interface PluginContext {
  /** The plugin's own name. */
  readonly name: string;
  /** The kernel's data directory; a plugin keeps its state under `dataDir/<plugin name>`. */
  readonly dataDir: string | undefined;
  /** A service the plugin injected. Throws a {@link KernelError} when it is not provided. */
  get<T>(service: ServiceDescriptor<T>): T;
  /** A service the plugin injected or optionally injected, or `undefined` when absent. */
  maybe<T>(service: ServiceDescriptor<T>): T | undefined;
  /** Provides a service this plugin declared in `provides`. */
  provide<T>(service: ServiceDescriptor<T>, implementation: T): void;
  /** Subscribes for the plugin's lifetime. */
  on<E extends KernelEventName>(event: E, handler: (payload: KernelEventPayload<E>) => void): void;
  /** Emits a kernel event. */
  emit<E extends KernelEventName>(event: E, payload: KernelEventPayload<E>): void;
  /** Registers something to undo when the plugin stops (run in reverse order). */
  onDispose(disposer: Disposer): void;
}

/** The kernel's side of a context: where services live and what this plugin may touch. */
export interface ContextHost {
  readonly dataDir: string | undefined;
  readonly events: EventBus;
  lookup(name: string): { readonly value: unknown } | undefined;
  register(name: string, value: unknown): void;
}

/** Builds the context for one plugin; the disposers it collects are returned for the kernel. */
export function createContext(
  plugin: {
    readonly name: string;
    readonly provides: ReadonlySet<string>;
    readonly inject: ReadonlySet<string>;
    readonly optional: ReadonlySet<string>;
  },
  host: ContextHost,
): { context: PluginContext; disposers: Disposer[]; provided: Set<string> } {
  const disposers: Disposer[] = [];
  const provided = new Set<string>();

  const lookup = (service: ServiceDescriptor<unknown>, required: boolean): unknown => {
    if (!plugin.inject.has(service.name) && !plugin.optional.has(service.name)) {
      throw new KernelError(
        'not-injected',
        `plugin '${plugin.name}' asked for service '${service.name}' without declaring it; add it to the plugin's inject (or optional) list.`,
      );
    }
    const found = host.lookup(service.name);
    if (found === undefined && required) {
      throw new KernelError(
        'not-provided',
        `service '${service.name}' is not provided: no running plugin provides it (plugin '${plugin.name}' asked). Add a plugin that provides it, or inject it as optional.`,
      );
    }
    return found?.value;
  };

  const context: PluginContext = {
    name: plugin.name,
    dataDir: host.dataDir,
    get: <T>(service: ServiceDescriptor<T>) => lookup(service, true) as T,
    maybe: <T>(service: ServiceDescriptor<T>) => lookup(service, false) as T | undefined,
    provide: (service, implementation) => {
      if (!plugin.provides.has(service.name)) {
        throw new KernelError(
          'not-declared',
          `plugin '${plugin.name}' provided service '${service.name}' without declaring it; add it to the plugin's provides list.`,
        );
      }
      host.register(service.name, implementation);
      provided.add(service.name);
    },
    on: (event, handler) => {
      disposers.push(host.events.on(event, handler));
    },
    emit: (event, payload) => host.events.emit(event, payload),
    onDispose: (disposer) => {
      disposers.push(disposer);
    },
  };
  return { context, disposers, provided };
}

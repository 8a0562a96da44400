import type { z } from 'zod';
import { createContext } from './context.js';
import { describeError } from './aalis-error.js';
import { KernelError } from './errors.js';
import { EventBus } from './events.js';
import type { Disposer, Plugin } from './plugin.js';
import type { ServiceDescriptor } from './service.js';

/** Where a plugin stands. */
export type PluginStatus =
  | { readonly name: string; readonly state: 'pending' }
  | { readonly name: string; readonly state: 'running' }
  | { readonly name: string; readonly state: 'failed'; readonly cause: string }
  | { readonly name: string; readonly state: 'stopped' };

/** What `stop()` met: disposers that threw, by plugin. The kernel stops all the same. */
export interface StopReport {
  readonly errors: readonly { readonly plugin: string; readonly message: string }[];
}

/** Options for {@link createKernel}. */
export interface KernelOptions {
  /** Root of plugin state on disk; plugins get it as `ctx.dataDir`. */
  readonly dataDir?: string;
  /** The event bus to use; a fresh one by default. */
  readonly events?: EventBus;
}

interface Entry {
  readonly plugin: Plugin<z.ZodType>;
  readonly config: unknown;
  readonly provides: ReadonlySet<string>;
  readonly inject: ReadonlySet<string>;
  readonly optional: ReadonlySet<string>;
  status: PluginStatus;
  disposers: Disposer[];
}

/** The microkernel: holds plugins, starts them in dependency order, contains their failures. */
export class Kernel {
  readonly events: EventBus;
  readonly dataDir: string | undefined;
  readonly #entries: Entry[] = [];
  readonly #services = new Map<string, { readonly value: unknown; readonly by: string }>();
  #started = false;
  #order: Entry[] = [];

  constructor(options: KernelOptions = {}) {
    this.events = options.events ?? new EventBus();
    this.dataDir = options.dataDir;
  }

  /** Adds a plugin with its raw config (validated at start). */
  use<S extends z.ZodType>(plugin: Plugin<S>, config?: z.input<S>): this {
    if (this.#started) {
      throw new KernelError('already-started', `cannot add plugin '${plugin.name}': the kernel has already started.`);
    }
    if (this.#entries.some((e) => e.plugin.name === plugin.name)) {
      throw new KernelError('duplicate-plugin', `plugin '${plugin.name}' was added twice; plugin names must be unique.`);
    }
    const names = (list: readonly ServiceDescriptor<unknown>[] | undefined) => new Set((list ?? []).map((s) => s.name));
    this.#entries.push({
      plugin: plugin as unknown as Plugin<z.ZodType>,
      config,
      provides: names(plugin.provides),
      inject: names(plugin.inject),
      optional: names(plugin.optional),
      status: { name: plugin.name, state: 'pending' },
      disposers: [],
    });
    return this;
  }

  /**
   * Starts every plugin in dependency order. Wiring errors (a missing provider, two providers,
   * a cycle) throw before anything runs; a plugin that fails is contained and reported in
   * {@link Kernel.status}, with everything that injects its services.
   */
  async start(): Promise<readonly PluginStatus[]> {
    if (this.#started) throw new KernelError('already-started', 'the kernel has already started.');
    this.#order = orderPlugins(this.#entries);
    this.#started = true;
    for (const entry of this.#order) await this.#apply(entry);
    return this.status();
  }

  /** The status of every plugin, in start order (registration order before start). */
  status(): readonly PluginStatus[] {
    return (this.#started ? this.#order : this.#entries).map((e) => e.status);
  }

  /** A provided service; throws a {@link KernelError} naming it when nobody provides it. */
  get<T>(service: ServiceDescriptor<T>): T {
    const found = this.#services.get(service.name);
    if (found === undefined) {
      throw new KernelError(
        'not-provided',
        `service '${service.name}' is not provided: no running plugin provides it. Add a plugin that provides it${this.#failedProviderHint(service.name)}.`,
      );
    }
    return found.value as T;
  }

  /** A provided service, or `undefined`. */
  maybe<T>(service: ServiceDescriptor<T>): T | undefined {
    return this.#services.get(service.name)?.value as T | undefined;
  }

  /** Disposes running plugins in reverse start order; a disposer that throws does not stop the rest. */
  async stop(): Promise<StopReport> {
    const errors: { plugin: string; message: string }[] = [];
    for (const entry of [...this.#order].reverse()) {
      if (entry.status.state !== 'running') continue;
      for (const message of await runDisposers(entry.disposers)) errors.push({ plugin: entry.plugin.name, message });
      entry.disposers = [];
      entry.status = { name: entry.plugin.name, state: 'stopped' };
    }
    this.#services.clear();
    return { errors };
  }

  async #apply(entry: Entry): Promise<void> {
    const name = entry.plugin.name;
    for (const service of entry.inject) {
      const provider = this.#providerOf(service);
      if (provider && provider.status.state === 'failed') {
        entry.status = {
          name,
          state: 'failed',
          cause: `it injects '${service}', whose provider '${provider.plugin.name}' failed: ${provider.status.cause}`,
        };
        return;
      }
    }
    const schema = entry.plugin.config;
    let config = entry.config;
    if (schema) {
      const parsed = schema.safeParse(entry.config);
      if (!parsed.success) {
        entry.status = { name, state: 'failed', cause: formatConfigError(name, parsed.error) };
        return;
      }
      config = parsed.data;
    }
    const { context, disposers, provided } = createContext(
      { name, provides: entry.provides, inject: entry.inject, optional: entry.optional },
      {
        dataDir: this.dataDir,
        events: this.events,
        lookup: (service) => this.#services.get(service),
        register: (service, value) => {
          this.#services.set(service, { value, by: name });
        },
      },
    );
    entry.disposers = disposers;
    try {
      const result = await entry.plugin.apply(context, config);
      if (typeof result === 'function') disposers.push(result);
      const missing = [...entry.provides].filter((s) => !provided.has(s));
      if (missing.length > 0) {
        throw new Error(`it declared it provides ${missing.map((s) => `'${s}'`).join(', ')} but did not call ctx.provide for it`);
      }
      entry.status = { name, state: 'running' };
    } catch (error) {
      for (const service of provided) this.#services.delete(service);
      await runDisposers(disposers);
      entry.disposers = [];
      entry.status = { name, state: 'failed', cause: `apply threw: ${describeError(error)}` };
    }
  }

  #providerOf(service: string): Entry | undefined {
    return this.#entries.find((e) => e.provides.has(service));
  }

  #failedProviderHint(service: string): string {
    const provider = this.#providerOf(service);
    if (provider?.status.state === 'failed') return ` (plugin '${provider.plugin.name}' provides it but failed: ${provider.status.cause})`;
    return '';
  }
}

/** Creates a kernel. */
export function createKernel(options?: KernelOptions): Kernel {
  return new Kernel(options);
}

async function runDisposers(disposers: readonly Disposer[]): Promise<string[]> {
  const errors: string[] = [];
  for (const dispose of [...disposers].reverse()) {
    try {
      await dispose();
    } catch (error) {
      errors.push(describeError(error));
    }
  }
  return errors;
}

function formatConfigError(plugin: string, error: z.ZodError): string {
  const issues = error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : '(the whole config)';
    return `field '${field}': ${issue.message}`;
  });
  return `plugin '${plugin}' has a bad config: ${issues.join('; ')}`;
}

/** Orders plugins so every provider starts before those that inject it; throws on wiring errors. */
function orderPlugins(entries: readonly Entry[]): Entry[] {
  const providers = new Map<string, Entry>();
  for (const entry of entries) {
    for (const service of entry.provides) {
      const other = providers.get(service);
      if (other) {
        throw new KernelError(
          'duplicate-provider',
          `service '${service}' is provided by both '${other.plugin.name}' and '${entry.plugin.name}'; remove one of them.`,
        );
      }
      providers.set(service, entry);
    }
  }
  const order: Entry[] = [];
  const done = new Set<Entry>();
  const path: { entry: Entry; via: string }[] = [];
  const visit = (entry: Entry, via: string) => {
    if (done.has(entry)) return;
    const at = path.findIndex((p) => p.entry === entry);
    if (at >= 0) {
      const chain = [...path.slice(at), { entry, via }]
        .map((p, i) => (i === 0 ? `'${p.entry.plugin.name}'` : `-(${p.via})-> '${p.entry.plugin.name}'`))
        .join(' ');
      throw new KernelError('dependency-cycle', `plugins depend on each other in a cycle: ${chain}. Break it with an optional injection.`);
    }
    path.push({ entry, via });
    for (const service of entry.inject) {
      const provider = providers.get(service);
      if (!provider) {
        const chain = [...path.map((p) => `'${p.entry.plugin.name}'`), `'${service}'`].join(' -> ');
        throw new KernelError(
          'missing-provider',
          `plugin '${entry.plugin.name}' injects service '${service}', which no plugin provides (${chain}). Add a plugin that provides '${service}', or make the injection optional.`,
        );
      }
      visit(provider, service);
    }
    for (const service of entry.optional) {
      const provider = providers.get(service);
      if (provider) visit(provider, service);
    }
    path.pop();
    done.add(entry);
    order.push(entry);
  };
  for (const entry of entries) visit(entry, '');
  return order;
}

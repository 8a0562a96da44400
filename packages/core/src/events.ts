import { EventEmitter } from 'eventemitter3';

/**
 * Every event the kernel carries, by name. Packages add theirs by declaration merging:
 * `declare module '@aalis/core' { interface KernelEvents { 'pod/finished': (e: PodEvent) => void } }`.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging across packages
export interface KernelEvents {}

/** The names of {@link KernelEvents}. */
export type KernelEventName = keyof KernelEvents & string;

/** The payload type of one event. */
export type KernelEventPayload<E extends KernelEventName> = KernelEvents[E] extends (
  payload: infer P,
) => void
  ? P
  : never;

/** The kernel's event bus: an eventemitter3 emitter typed by {@link KernelEvents}. */
export class EventBus {
  readonly #emitter = new EventEmitter();

  /** Subscribes; the returned function unsubscribes. */
  on<E extends KernelEventName>(event: E, handler: (payload: KernelEventPayload<E>) => void): () => void {
    this.#emitter.on(event, handler);
    return () => {
      this.#emitter.off(event, handler);
    };
  }

  /**
   * Delivers to every handler. A handler that throws does not stop the others; its error is
   * handed to `onHandlerError` so one broken adapter cannot silence an approval for the rest.
   */
  emit<E extends KernelEventName>(event: E, payload: KernelEventPayload<E>): void {
    for (const listener of this.#emitter.listeners(event)) {
      try {
        (listener as (p: unknown) => void)(payload);
      } catch (error) {
        this.onHandlerError(event, error);
      }
    }
  }

  /** Number of handlers for an event (for tests and diagnostics). */
  listenerCount(event: KernelEventName): number {
    return this.#emitter.listenerCount(event);
  }

  /** Called with a handler's error; replace to log it somewhere. */
  onHandlerError: (event: string, error: unknown) => void = (event, error) => {
    process.emitWarning(`handler of '${event}' threw: ${String(error)}`);
  };
}

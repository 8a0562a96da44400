import { AsyncLocalStorage } from 'node:async_hooks';

const callSignal = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs one tool call so that every ask made on its behalf ends with it: when `signal` aborts
 * (the caller hung up, the daemon stops), each of the call's pending asks is resolved as
 * cancelled (audited) and an ask made after that is refused at once. Held in the call's async
 * context rather than passed along, so an ask made by any plugin (core's high-risk gate,
 * reach's credential, a third-party tool) is tied to its call without each one threading it.
 * Work a call leaves running after it answers keeps this context; a signal aborts only while
 * its call runs (the daemon drops it after the answer), so such work is never cancelled late.
 */
export function withinCall<T>(signal: AbortSignal, run: () => T): T {
  return callSignal.run(signal, run);
}

/** The abort signal of the tool call the current code runs for, if it runs inside {@link withinCall}. */
export function currentCallSignal(): AbortSignal | undefined {
  return callSignal.getStore();
}

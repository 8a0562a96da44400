import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { SandboxService } from '@aalis/api-reach';

/** The phases a tool call's answer names in its `Server-Timing` header, in this order. */
export const CALL_TIMING_PHASES = ['index', 'tool', 'sandbox', 'total'] as const;
/** One of {@link CALL_TIMING_PHASES}. */
export type CallTimingPhase = (typeof CALL_TIMING_PHASES)[number];

const current = new AsyncLocalStorage<CallTiming>();

/**
 * Where one `POST /api/tools/call` spent its time, in milliseconds, for its answer's
 * `Server-Timing` header: `index` the wait for the conversation index's line, `tool` the dispatch
 * (checks, credential, handler), `sandbox` the sandbox runs inside it (as the daemon timed
 * `SandboxService.run`), `total` from the request's handler to the answer. `total - sandbox` is the
 * daemon's own cost of the call, which `bench/daemon-calls.ts` prints.
 */
export class CallTiming {
  readonly #start = performance.now();
  readonly #ms: Record<CallTimingPhase, number> = { index: 0, tool: 0, sandbox: 0, total: 0 };
  #runs = 0;

  /** Runs the tool's dispatch as this call's: sandbox runs made inside it are counted here. */
  async tool<T>(dispatch: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await current.run(this, dispatch);
    } finally {
      this.#ms.tool += performance.now() - start;
    }
  }

  /** Waits for the conversation index's write, counting the wait. */
  async index<T>(write: Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await write;
    } finally {
      this.#ms.index += performance.now() - start;
    }
  }

  /** The header's value, `total` as of now. */
  header(): string {
    this.#ms.total = performance.now() - this.#start;
    return CALL_TIMING_PHASES.map((phase) => `${phase};dur=${this.#ms[phase].toFixed(2)}${phase === 'sandbox' ? `;desc="${this.#runs} run(s)"` : ''}`).join(', ');
  }

  /** Adds one sandbox run's time. */
  addSandboxRun(ms: number): void {
    this.#ms.sandbox += ms;
    this.#runs += 1;
  }
}

/**
 * The sandbox service with each `run` timed into the {@link CallTiming} of the call it runs for
 * (none outside a call: a background command after its call answered). Everything else is the
 * service's own: a method of its class is bound to it (its private fields need the service as
 * `this`), so what the service adds later passes through unchanged.
 */
export function timedSandbox(service: SandboxService): SandboxService {
  const own = Object.getOwnPropertyDescriptor(service, 'run');
  // a frozen `run` must be answered as itself (a proxy's rule): such a service is not timed
  if (own !== undefined && !own.configurable && !own.writable) return service;
  const run: SandboxService['run'] = async (request) => {
    const timing = current.getStore();
    if (timing === undefined) return service.run(request);
    const start = performance.now();
    try {
      return await service.run(request);
    } finally {
      timing.addSandboxRun(performance.now() - start);
    }
  };
  return new Proxy(service, {
    get(target, key) {
      if (key === 'run') return run;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' && !Object.hasOwn(target, key) ? value.bind(target) : value;
    },
  });
}

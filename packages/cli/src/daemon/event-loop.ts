import { closeSync, openSync, readSync } from 'node:fs';
import { type IntervalHistogram, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { z } from 'zod';

/** How finely a window measures (ms): a stall shorter than this may not show. */
export const EVENT_LOOP_RESOLUTION_MS = 5;
/** A window ends by itself after this long, so a forgotten one does not wake the daemon forever. */
export const EVENT_LOOP_WINDOW_MS = 10 * 60_000;

/** What `GET /api/status/event-loop` answers: the window's figures, in milliseconds. */
export const EventLoopAnswerSchema = z.object({
  watching: z.boolean().describe('false when no window was started, or the last one ended'),
  sinceMs: z.number().describe('how long the window has measured (0 when none was started)'),
  maxMs: z.number().describe("the longest the daemon's thread was held beyond the resolution"),
  p99Ms: z.number(),
  p50Ms: z.number(),
  meanMs: z.number(),
  resolutionMs: z.number(),
  ownMaxMs: z
    .number()
    .nullable()
    .describe('the longest stall less the time the thread waited meanwhile for a CPU other processes held (Linux schedstat): what the daemon itself held; null where the system does not say'),
  cpuWaitMs: z.number().nullable().describe('how long the thread waited for a CPU over the window (Linux schedstat); null where the system does not say'),
});
/** The figures of a window. */
export type EventLoopAnswer = z.infer<typeof EventLoopAnswerSchema>;

/**
 * How long the thread that opened it has waited for a CPU while runnable (ns), from Linux's
 * schedstat, read again at offset 0 (one system call a tick); undefined elsewhere.
 */
class CpuWait {
  readonly #buffer = Buffer.alloc(128);
  private constructor(readonly fd: number) {}

  /** Opened on the calling thread (the daemon's), or undefined where the system does not say. */
  static open(): CpuWait | undefined {
    try {
      const wait = new CpuWait(openSync('/proc/thread-self/schedstat', 'r'));
      if (wait.read() !== undefined) return wait;
      wait.close();
    } catch {
      // not Linux, or no schedstat: the figure is null
    }
    return undefined;
  }

  read(): number | undefined {
    try {
      const text = this.#buffer.toString('utf8', 0, readSync(this.fd, this.#buffer, 0, this.#buffer.length, 0));
      const wait = Number(text.split(' ')[1]);
      return Number.isFinite(wait) ? wait : undefined;
    } catch {
      return undefined;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The longest stall of this thread less its wait for a CPU over the same stall: on a machine
 * whose cores other processes hold, a thread is late without having held its loop (measured here
 * on 2 shared cores at load 15: half of a busy thread's wall time waiting for a CPU). Ticks every
 * resolution; each tick's lateness less the growth of schedstat's run-queue wait is what the thread
 * itself spent, running or blocked in a system call.
 */
class OwnStall {
  readonly #timer: NodeJS.Timeout;
  #last = performance.now();
  readonly #firstWait: number;
  #lastWait: number;
  maxMs = 0;

  private constructor(
    private readonly clock: CpuWait,
    wait: number,
  ) {
    this.#firstWait = wait;
    this.#lastWait = wait;
    this.#timer = setInterval(() => this.#tick(), EVENT_LOOP_RESOLUTION_MS);
    this.#timer.unref();
  }

  /** Starts measuring where the system says how long a thread waited for a CPU (Linux). */
  static start(): OwnStall | undefined {
    const clock = CpuWait.open();
    const wait = clock?.read();
    return clock === undefined || wait === undefined ? undefined : new OwnStall(clock, wait);
  }

  /** How long the thread waited for a CPU since the start (ms). */
  get cpuWaitMs(): number {
    return (this.#lastWait - this.#firstWait) / 1e6;
  }

  stop(): void {
    this.#tick();
    clearInterval(this.#timer);
    this.clock.close();
  }

  #tick(): void {
    const now = performance.now();
    const wait = this.clock.read() ?? this.#lastWait;
    const late = now - this.#last - EVENT_LOOP_RESOLUTION_MS;
    this.maxMs = Math.max(this.maxMs, late - (wait - this.#lastWait) / 1e6);
    this.#last = now;
    this.#lastWait = wait;
  }
}

/**
 * Measures how long the daemon's event loop is held (`monitorEventLoopDelay`) over a window a
 * client starts, as a bench does around a load: off until started, so an idle daemon is not woken
 * every few milliseconds for a figure nobody reads. Where Linux says how long the thread waited
 * for a CPU, the longest stall is also given less that wait ({@link OwnStall}).
 */
export class EventLoopWatch {
  #histogram: IntervalHistogram | undefined;
  #own: OwnStall | undefined;
  #since = 0;
  #ended: EventLoopAnswer | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** Starts a new window (ending the one before). */
  start(): EventLoopAnswer {
    this.stop();
    this.#ended = undefined;
    this.#histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.#histogram.enable();
    this.#own = OwnStall.start();
    this.#since = performance.now();
    this.#timer = setTimeout(() => this.stop(), EVENT_LOOP_WINDOW_MS);
    this.#timer.unref();
    return this.read();
  }

  /** The figures of the window so far (or of the last one, once it ended). */
  read(): EventLoopAnswer {
    const h = this.#histogram;
    if (h === undefined) return this.#ended ?? { watching: false, sinceMs: 0, maxMs: 0, p99Ms: 0, p50Ms: 0, meanMs: 0, resolutionMs: EVENT_LOOP_RESOLUTION_MS, ownMaxMs: null, cpuWaitMs: null };
    // the histogram counts the resolution's own wait in every sample; a stall is what is beyond it
    const beyond = (ns: number) => (h.count === 0 ? 0 : Math.max(0, ns / 1e6 - EVENT_LOOP_RESOLUTION_MS));
    return {
      watching: true,
      sinceMs: performance.now() - this.#since,
      maxMs: beyond(h.max),
      p99Ms: beyond(h.percentile(99)),
      p50Ms: beyond(h.percentile(50)),
      meanMs: beyond(h.mean),
      resolutionMs: EVENT_LOOP_RESOLUTION_MS,
      ownMaxMs: this.#own ? Math.max(0, this.#own.maxMs) : null,
      cpuWaitMs: this.#own ? this.#own.cpuWaitMs : null,
    };
  }

  /** Ends the window; its figures stay readable. */
  stop(): void {
    if (this.#histogram === undefined) return;
    this.#own?.stop();
    this.#ended = { ...this.read(), watching: false };
    this.#own = undefined;
    this.#histogram.disable();
    this.#histogram = undefined;
    clearTimeout(this.#timer);
  }
}

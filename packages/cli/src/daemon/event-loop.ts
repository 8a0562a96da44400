import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
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
});
/** The figures of a window. */
export type EventLoopAnswer = z.infer<typeof EventLoopAnswerSchema>;

/**
 * Measures how long the daemon's event loop is held (`monitorEventLoopDelay`) over a window a
 * client starts, as a bench does around a load: off until started, so an idle daemon is not woken
 * every few milliseconds for a figure nobody reads.
 */
export class EventLoopWatch {
  #histogram: IntervalHistogram | undefined;
  #since = 0;
  #ended: EventLoopAnswer | undefined;
  #timer: NodeJS.Timeout | undefined;

  /** Starts a new window (ending the one before). */
  start(): EventLoopAnswer {
    this.stop();
    this.#ended = undefined;
    this.#histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.#histogram.enable();
    this.#since = performance.now();
    this.#timer = setTimeout(() => this.stop(), EVENT_LOOP_WINDOW_MS);
    this.#timer.unref();
    return this.read();
  }

  /** The figures of the window so far (or of the last one, once it ended). */
  read(): EventLoopAnswer {
    const h = this.#histogram;
    if (h === undefined) return this.#ended ?? { watching: false, sinceMs: 0, maxMs: 0, p99Ms: 0, p50Ms: 0, meanMs: 0, resolutionMs: EVENT_LOOP_RESOLUTION_MS };
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
    };
  }

  /** Ends the window; its figures stay readable. */
  stop(): void {
    if (this.#histogram === undefined) return;
    this.#ended = { ...this.read(), watching: false };
    this.#histogram.disable();
    this.#histogram = undefined;
    clearTimeout(this.#timer);
  }
}

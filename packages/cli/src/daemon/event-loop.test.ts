import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_RESOLUTION_MS, EventLoopWatch } from './event-loop.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('EventLoopWatch', () => {
  it('sees a block of the thread it watches, only inside its window, and keeps the figures once stopped', async () => {
    const watch = new EventLoopWatch();
    expect(watch.read()).toMatchObject({ watching: false, maxMs: 0 });
    watch.start();
    await tick(4 * EVENT_LOOP_RESOLUTION_MS);
    const held = Date.now();
    while (Date.now() - held < 150); // the thread held, as a synchronous step of a call would
    await tick(4 * EVENT_LOOP_RESOLUTION_MS);
    const seen = watch.read();
    expect(seen.watching).toBe(true);
    expect(seen.maxMs).toBeGreaterThanOrEqual(150 - 2 * EVENT_LOOP_RESOLUTION_MS);
    watch.stop();
    expect(watch.read()).toMatchObject({ watching: false, maxMs: seen.maxMs });
    // a new window starts from nothing: the block before it is not counted
    watch.start();
    await tick(4 * EVENT_LOOP_RESOLUTION_MS);
    expect(watch.read().maxMs).toBeLessThan(seen.maxMs);
    watch.stop();
  });

  it.runIf(process.platform === 'linux')('counts a thread blocked in a system call as its own stall, apart from its wait for a CPU', async () => {
    const watch = new EventLoopWatch();
    watch.start();
    await tick(4 * EVENT_LOOP_RESOLUTION_MS);
    // blocked, not runnable: none of it is a wait for a CPU, whatever the machine's load
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
    await tick(4 * EVENT_LOOP_RESOLUTION_MS);
    const seen = watch.read();
    expect(seen.ownMaxMs).not.toBeNull();
    expect(seen.ownMaxMs!).toBeGreaterThanOrEqual(150 - 2 * EVENT_LOOP_RESOLUTION_MS);
    expect(seen.cpuWaitMs).toBeGreaterThanOrEqual(0);
    watch.stop();
    expect(watch.read()).toMatchObject({ watching: false, ownMaxMs: seen.ownMaxMs === null ? null : expect.any(Number) });
    watch.start();
    await tick(4 * EVENT_LOOP_RESOLUTION_MS);
    expect(watch.read().ownMaxMs!).toBeLessThan(seen.ownMaxMs!);
    watch.stop();
  });
});

// A sandbox prepared while a run goes on is made from that run's scan, taken a moment before: one
// scan of the host per run, where each preparation used to scan again. Nothing is trusted for it:
// the run that takes it scans again at release and compares (prepared-swaps.test.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HostThread } from './host-thread.js';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('the scans of prepared sandboxes', { timeout: 240_000 }, () => {
  let s: OverlayScene;
  let warm: LinuxSandbox;
  const ops: string[] = [];
  beforeAll(async () => {
    s = await overlayScene();
    const run = HostThread.prototype.run;
    vi.spyOn(HostThread.prototype, 'run').mockImplementation(function (this: HostThread, job) {
      ops.push(job.op);
      return run.call(this, job);
    });
    warm = s.sandbox({ prepare: 'on' });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await warm?.close();
    s?.cleanup();
  });

  it('one scan per run, the preparations made from it; the run after takes one and says what the host holds now', async () => {
    const scans = () => ops.filter((op) => op === 'scan').length;
    await warm.run(req(s, ['true']));
    await warm.preparationsSettled();
    // before: the run's scan, then one more for each of the two preparations it started
    expect(scans()).toBe(1);
    expect(warm.preparedCounts().prepared).toBe(2);
    writeFileSync(join(s.ws, 'after.txt'), 'made after the preparation\n');
    const r = await warm.run(req(s, ['cat', 'after.txt']));
    await warm.preparationsSettled();
    expect(r.stdout).toBe('made after the preparation\n');
    expect(warm.preparedCounts().used).toBe(1);
    expect(scans()).toBe(2);
  });
});

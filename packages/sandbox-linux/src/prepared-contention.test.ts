import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OverlayScene, overlayScene, req, untilProcess } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';
import { findPerl } from './system-interpreters.js';

/*
 * A prepared run costs more CPU than a cold one (its release scans, translates and compares again):
 * with eight clients on two cores, preparing made the daemon slower (28.8 calls/s against 32.5
 * without). So nothing is prepared while another run of the service is setting up; a command
 * that runs long (a dev server in the background) is past its set-up and does not stop it.
 */
describe.skipIf(process.getuid?.() !== 0 || findPerl() === undefined)('preparing ahead while other runs go on', { timeout: 120_000 }, () => {
  let a: OverlayScene;
  let b: OverlayScene;
  let warm: LinuxSandbox;
  beforeAll(async () => {
    a = await overlayScene();
    b = await overlayScene();
    warm = a.sandbox({ prepare: 'on' });
  });
  afterAll(async () => {
    await warm?.close();
    a?.cleanup();
    b?.cleanup();
  });

  it('prepares nothing after a run while another run is setting up; alone, it does', async () => {
    // Another run's set-up is stood for by the service's count of runs setting up: a real one held
    // mid-set-up (its scan held at an open) holds the walks thread, which this run's scan shares
    const service = warm as unknown as { settingUp: number };
    await warm.preparationsSettled();
    const before = warm.preparedCounts();
    service.settingUp += 1;
    try {
      expect((await warm.run(req(b, ['true']))).exitCode).toBe(0);
      await warm.preparationsSettled();
      expect(warm.preparedCounts().prepared).toBe(before.prepared);
    } finally {
      service.settingUp -= 1;
    }
    expect((await warm.run(req(b, ['true']))).exitCode).toBe(0);
    await warm.preparationsSettled();
    expect(warm.preparedCounts().prepared).toBeGreaterThan(before.prepared);
  });

  it('counts a run as setting up until its command is released, and not after', async () => {
    const service = warm as unknown as { settingUp: number };
    const secs = `2.${process.pid}`;
    const run = warm.run(req(a, ['sh', '-c', `sleep ${secs}`]));
    expect(service.settingUp).toBe(1);
    await untilProcess(secs);
    expect(service.settingUp).toBe(0);
    await run;
    expect(service.settingUp).toBe(0);
  });

  it('prepares while a long command runs: it is past its set-up', async () => {
    const secs = `3.${process.pid}`; // the sleep's own argv element, found in /proc once the command runs
    const long = warm.run(req(a, ['sh', '-c', `sleep ${secs}; echo done`]));
    await untilProcess(secs);
    await warm.preparationsSettled();
    const before = warm.preparedCounts();
    await warm.run(req(b, ['sh', '-c', 'echo b']));
    await warm.preparationsSettled();
    expect(warm.preparedCounts().prepared).toBeGreaterThan(before.prepared);
    expect((await long).stdout).toBe('done\n');
  });

  it("with preparedFrom 2, prepares from a policy's second run within the idle time, not its first", async () => {
    // The idle time is long for the first part and short for the second: the machine's load can
    // only stretch the time between two runs (a 1.5 s idle time failed under a loaded CI run, the
    // two runs' set-ups taking longer than that), which makes "past the idle time" surer, never less.
    const once = a.sandbox({ prepare: 'on', preparedFrom: 2, preparedIdleMs: 120_000 });
    const brief = a.sandbox({ prepare: 'on', preparedFrom: 2, preparedIdleMs: 300 });
    try {
      const count = async (sandbox: typeof once) => {
        await sandbox.preparationsSettled();
        return sandbox.preparedCounts().prepared;
      };
      await once.run(req(b, ['true']));
      expect(await count(once)).toBe(0); // a conversation of one call holds nothing
      await once.run(req(b, ['true']));
      expect(await count(once)).toBeGreaterThan(0);
      await brief.run(req(b, ['true']));
      await new Promise((r) => setTimeout(r, 1000)); // past the idle time: the next run is a first again
      await brief.run(req(b, ['true']));
      expect(await count(brief)).toBe(0);
    } finally {
      await Promise.all([once.close(), brief.close()]);
    }
  });
});

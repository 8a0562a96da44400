import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetOverlayProbe } from './overlay-mount.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { findExecutable } from './tools.js';

let s: Scene;
let dir: string;
beforeAll(() => {
  s = makeScene();
  dir = mkdtempSync(join(tmpdir(), 'aalis-probe-cache-'));
});
afterAll(() => {
  s.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** A bwrap that logs each start, then runs the real one. */
function loggingBwrap(): { bwrap: string; starts: () => number } {
  const real = findExecutable('bwrap');
  const own = mkdtempSync(join(dir, 'bin-'));
  const log = join(own, 'bwrap.log');
  const bwrap = join(own, 'bwrap');
  writeFileSync(bwrap, `#!/bin/sh\necho x >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(bwrap, 0o755);
  return { bwrap, starts: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0) };
}

/** An unshare that logs each start's arguments, then runs the real one: the overlay probe's starts name its directory. */
function loggingUnshare(): { unshare: string; probes: () => number } {
  const real = findExecutable('unshare');
  const own = mkdtempSync(join(dir, 'unshare-'));
  const log = join(own, 'unshare.log');
  const unshare = join(own, 'unshare');
  writeFileSync(unshare, `#!/bin/sh\necho "$@" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(unshare, 0o755);
  return { unshare, probes: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('aalis-overlay-probe-')).length : 0) };
}

describe('the linux probe: once per process, none while the cache is fresh', { timeout: 120_000 }, () => {
  it('a fresh cached probe answers the overlay probe too: a later process mounts no probe overlay, and its run still writes through', async () => {
    const { unshare, probes } = loggingUnshare();
    const tmpDir = mkdtempSync(join(dir, 'tmp-'));
    const file = join(dir, 'overlay', 'linux-probe.json');
    forgetOverlayProbe();
    const first = createLinuxSandbox({ unshare, tmpDir, probeCache: { file } });
    const probe = await first.probe();
    expect(probe.checks.find((c) => c.name === 'host-model')?.detail).toMatch(/^overlay: /);
    expect(probes()).toBe(1);
    await first.close();

    forgetOverlayProbe(); // as a new process starts with no answer of its own
    const later = createLinuxSandbox({ unshare, tmpDir, probeCache: { file } });
    expect((await later.probe()).available).toBe(true);
    const r = await later.run(req(s, ['/bin/sh', '-c', 'echo kept > seeded.txt']));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'seeded.txt'), 'utf8')).toBe('kept\n');
    expect(probes()).toBe(1); // neither the probe nor the run mounted a probe overlay
    await later.close();
  });

  it('notices a changed machine state: another unshare (upgraded) or another temp directory probes the overlay again', async () => {
    const { unshare, probes } = loggingUnshare();
    const tmpDir = mkdtempSync(join(dir, 'tmp-'));
    const file = join(dir, 'overlay-state', 'linux-probe.json');
    const fresh = async (options: { tmpDir: string }) => {
      forgetOverlayProbe();
      const service = createLinuxSandbox({ unshare, probeCache: { file }, ...options });
      expect((await service.probe()).available).toBe(true);
      await service.close();
    };
    await fresh({ tmpDir });
    await fresh({ tmpDir });
    expect(probes()).toBe(1);
    utimesSync(unshare, new Date(), new Date(Date.now() + 5000)); // "upgraded"
    await fresh({ tmpDir });
    expect(probes()).toBe(2);
    await fresh({ tmpDir: mkdtempSync(join(dir, 'tmp-')) });
    expect(probes()).toBe(3);
    await fresh({ tmpDir });
    expect(probes()).toBe(4); // the entry is the other directory's now
  });

  it('probes once for a probe and a run in one process, and not at all in a later one with the same cache', async () => {
    const { bwrap, starts } = loggingBwrap();
    const file = join(dir, 'cache', 'linux-probe.json');
    // a root daemon's bwrap starts from the root map's step: its log written there needs the host
    // left writable (with the step's read-only host the run's start would write nothing down)
    const first = createLinuxSandbox({ bwrap, probeCache: { file }, stepReadOnly: 'off' });
    expect((await first.probe()).available).toBe(true);
    const probeStarts = starts();
    expect(probeStarts).toBeGreaterThan(1);
    const r = await first.run(req(s, ['/bin/true']));
    expect(r.exitCode).toBe(0);
    expect(starts()).toBe(probeStarts + 1); // the run's own bubblewrap, no second probe

    const later = createLinuxSandbox({ bwrap, probeCache: { file }, stepReadOnly: 'off' });
    expect((await later.probe()).available).toBe(true);
    const again = await later.run(req(s, ['/bin/true']));
    expect(again.exitCode).toBe(0);
    expect(starts()).toBe(probeStarts + 2);
  });

  it('probes again when bubblewrap changed (another inode, size or mtime) or the cache is too old', async () => {
    const { bwrap, starts } = loggingBwrap();
    const file = join(dir, 'other', 'linux-probe.json');
    await createLinuxSandbox({ bwrap, probeCache: { file } }).probe();
    const one = starts();
    await createLinuxSandbox({ bwrap, probeCache: { file } }).probe();
    expect(starts()).toBe(one);
    utimesSync(bwrap, new Date(), new Date(Date.now() + 5000)); // "upgraded"
    await createLinuxSandbox({ bwrap, probeCache: { file } }).probe();
    expect(starts()).toBe(one * 2);
    await createLinuxSandbox({ bwrap, probeCache: { file, ttlMs: 0 } }).probe();
    expect(starts()).toBe(one * 3);
  });

  it('never caches a probe that found something missing', async () => {
    const file = join(dir, 'missing', 'linux-probe.json');
    const probe = await createLinuxSandbox({ bwrap: join(dir, 'no-such-bwrap'), probeCache: { file } }).probe();
    expect(probe.available).toBe(false);
    expect(existsSync(file)).toBe(false);
  });
});

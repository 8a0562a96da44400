import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('the linux probe: once per process, none while the cache is fresh', { timeout: 120_000 }, () => {
  it('probes once for a probe and a run in one process, and not at all in a later one with the same cache', async () => {
    const { bwrap, starts } = loggingBwrap();
    const file = join(dir, 'cache', 'linux-probe.json');
    const first = createLinuxSandbox({ bwrap, probeCache: { file } });
    expect((await first.probe()).available).toBe(true);
    const probeStarts = starts();
    expect(probeStarts).toBeGreaterThan(1);
    const r = await first.run(req(s, ['/bin/true']));
    expect(r.exitCode).toBe(0);
    expect(starts()).toBe(probeStarts + 1); // the run's own bubblewrap, no second probe

    const later = createLinuxSandbox({ bwrap, probeCache: { file } });
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

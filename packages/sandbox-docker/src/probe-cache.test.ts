import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';

/** A docker client that logs each call's first argument, then runs the real one. */
function loggingClient(dir: string): { binary: string; calls: () => string[] } {
  const log = join(dir, 'calls.log');
  const binary = join(dir, 'docker');
  writeFileSync(binary, `#!/bin/sh\necho "$1" >> '${log}'\nexec docker "$@"\n`);
  chmodSync(binary, 0o755);
  return { binary, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

describe.skipIf(engineSkip)('the docker probe: once per process, none while the cache is fresh', () => {
  it('probes once per process, and a later process with the same cache starts no container and calls no client', async () => {
    const dir = tempDir();
    const client = loggingClient(dir);
    const file = join(dir, 'cache', 'docker-probe.json');
    const first = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-probe-cache', client: { binary: client.binary }, probeCache: { file } });
    expect((await first.probe()).available).toBe(true);
    expect((await first.probe()).available).toBe(true);
    expect(client.calls().filter((c) => c === 'run')).toHaveLength(1);
    const before = client.calls().length;

    const later = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-probe-cache', client: { binary: client.binary }, probeCache: { file } });
    const cached = await later.probe();
    expect(cached.available).toBe(true);
    expect(cached.checks.find((c) => c.name === 'baseline')?.detail).toContain('cached in');
    expect(client.calls().length).toBe(before);
    // Its run does not ask for the image either: the probe saw it.
    const result = await later.run({ argv: ['true'], cwd: tempDir(), env: {}, timeoutMs: 20_000, policy: policy() });
    expect(result.exitCode).toBe(0);
    expect(client.calls().slice(before)).toEqual(['run']);
  });

  it('probes again when the cache is too old, names other images, or a run was refused', async () => {
    const dir = tempDir();
    const client = loggingClient(dir);
    const file = join(dir, 'docker-probe.json');
    const options = { images: { stdio: TEST_IMAGE }, instance: 'test-probe-cache', client: { binary: client.binary } };
    await new DockerSandbox({ ...options, probeCache: { file } }).probe();
    const runs = () => client.calls().filter((c) => c === 'run').length;
    expect(runs()).toBe(1);

    await new DockerSandbox({ ...options, probeCache: { file, ttlMs: 0 } }).probe();
    expect(runs()).toBe(2);

    await new DockerSandbox({ ...options, images: { stdio: TEST_IMAGE, network: TEST_IMAGE.replace(/:.*$/, ':other-tag') }, probeCache: { file } }).probe();
    expect(runs()).toBe(2); // a missing image fails before the baseline container; it is not cached
    expect(JSON.parse(readFileSync(file, 'utf8')).key).not.toContain('other-tag');

    // A run the engine refuses (here: more cpus than this machine has) forgets the cache.
    const refusing = new DockerSandbox({ ...options, probeCache: { file } });
    expect((await refusing.probe()).available).toBe(true);
    await expect(refusing.run({ argv: ['true'], cwd: tempDir(), env: {}, timeoutMs: 20_000, policy: policy(), sandboxSpec: { profile: 'stdio', cpus: '64' } })).rejects.toThrow(/refused/);
    await expect.poll(() => existsSync(file)).toBe(false);
  });
});

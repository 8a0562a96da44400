import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, policy, TEST_IMAGE, gate, tempDir, until } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { LABELS } from './labels.js';

const NO_TIMEOUT_IMAGE = 'aalis/sandbox-test-notimeout:latest';
const busybox = '/bin/busybox';

describe.skipIf(engineSkip)("a container's own deadline", () => {
  beforeAll(() => {
    // An image with a shell and nothing else: no timeout program to keep the deadline.
    const root = tempDir('aalis-notimeout-');
    mkdirSync(join(root, 'bin'));
    copyFileSync(busybox, join(root, 'bin', 'sh'));
    execFileSync('sh', ['-c', `tar -C ${root} -c . | docker import --change 'ENV PATH=/bin' - ${NO_TIMEOUT_IMAGE}`], { stdio: 'pipe' });
    rmSync(root, { recursive: true, force: true });
  });
  afterAll(() => {
    execFileSync('docker', ['image', 'rm', '--force', NO_TIMEOUT_IMAGE], { stdio: 'ignore' });
  });

  it('is kept by timeout under the engine init, visible from inside, with the deadline on the label', async () => {
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-deadline' });
    const before = Date.now();
    // it runs until the test has read its label (a 2 s sleep could end before a loaded engine listed it)
    const go = gate();
    const run = box.run({ argv: ['sh', '-c', `ps -o args; ${go.wait}`], cwd: go.dir, env: {}, timeoutMs: 20_000, policy: policy() });
    const running = () => containersLabelled(`${LABELS.instance}=test-deadline`, 'running');
    await until(() => running().length > 0);
    const deadline = Number(execFileSync('docker', ['inspect', '--format', `{{index .Config.Labels "${LABELS.deadline}"}}`, running()[0] ?? 'none'], { encoding: 'utf8' }).trim());
    expect(deadline).toBeGreaterThanOrEqual(before + 25_000);
    expect(deadline).toBeLessThan(Date.now() + 26_000);
    go.open();
    const result = await run;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^\/sbin\/docker-init -- timeout -s KILL 25 sh -c/m);
  }, 120_000);

  it('refuses to run in an image without timeout, and says why (nothing runs)', async () => {
    expect(existsSync(busybox)).toBe(true);
    const box = new DockerSandbox({ images: { stdio: NO_TIMEOUT_IMAGE }, instance: 'test-deadline' });
    const ws = tempDir();
    const marker = join(ws, 'ran');
    const error = await box.run({ argv: ['sh', '-c', `echo > ${marker}`], cwd: ws, env: {}, timeoutMs: 20_000, policy: policy({ write: [ws] }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxUnavailableError);
    expect((error as Error).message).toMatch(/the image has no timeout program/);
    expect(existsSync(marker)).toBe(false);
    const probe = await box.probe();
    expect(probe.available).toBe(false);
    expect(containersLabelled(`${LABELS.instance}=test-deadline`)).toEqual([]);
  }, 40_000);
});

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { LABELS } from './labels.js';

const here = dirname(fileURLToPath(import.meta.url));

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(engineSkip)('containers of a daemon killed mid-run', () => {
  it('outlive the killed process, and the next start removes them', async () => {
    const instance = 'test-orphans';
    const label = `${LABELS.instance}=${instance}`;
    expect(containersLabelled(label)).toEqual([]);
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, '..', 'test', 'hang.ts'), instance], { cwd: join(here, '..'), stdio: 'ignore' });
    await until(() => containersLabelled(label).length === 1, 20_000);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // SIGKILL gives the client no chance to clean up: the engine keeps the container running.
    expect(containersLabelled(label)).toHaveLength(1);

    const next = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance });
    expect(await next.reapOrphans()).toBe(1);
    expect(containersLabelled(label)).toEqual([]);
    expect(await next.reapOrphans()).toBe(0);
  });

  it('a running sandbox never reaps its own live containers', async () => {
    const instance = 'test-orphans-live';
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance });
    const run = box.run({ argv: ['sleep', '3'], cwd: tempDir(), env: {}, timeoutMs: 20_000, policy: policy() });
    await until(() => containersLabelled(`${LABELS.instance}=${instance}`).length === 1, 20_000);
    expect(await box.reapOrphans()).toBe(0);
    expect((await run).exitCode).toBe(0);
    expect(containersLabelled(`${LABELS.instance}=${instance}`)).toEqual([]);
  });
});

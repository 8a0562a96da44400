// A kernel SIGKILLed in the middle of a spec tool's call leaves a container; the next start of
// the same instance removes it (its owner is provably dead). Real processes, real engine.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addFixture, containersOf, engineSkip, startSpecEnv, tempDir } from './spec-tools.testing.js';

describe.skipIf(engineSkip)('a kernel killed mid-call', () => {
  it('leaves a container that the next start reaps', async () => {
    const toolsDir = join(tempDir(), 'tools');
    addFixture(toolsDir, 'long_hang');
    const instance = `h4kill-${process.pid}-${Date.now() % 100000}`;
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'calling-kernel.ts'), toolsDir, instance], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => child.on('exit', r));
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => d.toString().includes('calling') && resolve());
      child.on('exit', () => reject(new Error('the kernel process ended before calling')));
    });
    for (let i = 0; i < 100 && containersOf(instance).length === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(containersOf(instance)).toHaveLength(1);
    child.kill('SIGKILL');
    await exited;
    expect(containersOf(instance)).toHaveLength(1); // nobody removed it: its owner was killed
    const next = await startSpecEnv({ toolsDir, instance });
    try {
      expect(containersOf(instance)).toEqual([]);
    } finally {
      await next.stop();
    }
  }, 90_000);
});

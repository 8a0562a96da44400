import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containersLabelled, engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';
import { LABELS } from './labels.js';

describe.skipIf(engineSkip)('a session container', () => {
  const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-session' });
  const label = `${LABELS.instance}=test-session`;

  it('runs commands in one container pinned to its policy, with the same baseline', async () => {
    const ws = tempDir();
    const session = await box.openSession({ cwd: ws, env: { LANG: 'C' }, policy: policy() });
    try {
      expect(containersLabelled(label)).toHaveLength(1);
      await session.exec({ argv: ['sh', '-c', 'echo kept > /tmp/state'], timeoutMs: 10_000 });
      const second = await session.exec({ argv: ['sh', '-c', `cat /tmp/state; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; id -u; echo $LANG; touch ${ws}/x`], timeoutMs: 10_000 });
      expect(second.stdout).toMatch(/^kept\nCapEff:\s+0+\nNoNewPrivs:\s+1\n10001\nC\n$/);
      expect(second.stderr).toMatch(/x: (Read-only file system|Permission denied)/);
      expect(existsSync(join(ws, 'x'))).toBe(false);
    } finally {
      await session.close();
    }
    expect(containersLabelled(label)).toEqual([]);
  });

  it('a timeout kills and removes the whole session; further commands are refused', async () => {
    const session = await box.openSession({ cwd: tempDir(), env: {}, policy: policy() });
    const result = await session.exec({ argv: ['sleep', '30'], timeoutMs: 1000 });
    expect(result.timedOut).toBe(true);
    expect(session.open).toBe(false);
    expect(containersLabelled(label)).toEqual([]);
    await expect(session.exec({ argv: ['true'], timeoutMs: 1000 })).rejects.toThrow(/is closed/);
  });
});

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
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

  // A process a command leaves running can write a landing after that command's check: it was
  // found only at the next command, and never once the session closed (a git hook stayed for good).
  it('a landing a left-behind process writes later is removed before the next command runs, and at the close', { timeout: 120_000 }, async () => {
    const ws = tempDir();
    const landings = policy({ write: [ws], writeDeny: [{ pattern: '(.*/)?\\.git(/.*)?' }, { pattern: '(.*/)?\\.envrc' }] });
    const session = await box.openSession({ cwd: ws, env: {}, policy: landings });
    try {
      const late = '(sleep 1; mkdir -p .git/hooks; echo "#!/bin/sh" > .git/hooks/pre-commit; echo late > .envrc) </dev/null >/dev/null 2>&1 & echo started';
      expect((await session.exec({ argv: ['sh', '-c', late], timeoutMs: 10_000 })).stdout).toBe('started\n');
      await new Promise((r) => setTimeout(r, 3000));
      expect(existsSync(join(ws, '.envrc'))).toBe(true); // on the host between two commands: the window this model has
      const next = await session.exec({ argv: ['sh', '-c', 'ls -a'], timeoutMs: 10_000 });
      expect(existsSync(join(ws, '.envrc'))).toBe(false);
      expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
      expect(next.writeDenied).toBe(true);
      expect(next.deniedWrites).toEqual(expect.arrayContaining([join(ws, '.envrc')]));
      expect(next.stderr).toContain('by a process an earlier command left running, and removed');
      expect(next.stdout).not.toContain('.envrc');
      // once more, and then the session closes before any other command
      await session.exec({ argv: ['sh', '-c', '(sleep 1; echo again > .envrc) </dev/null >/dev/null 2>&1 &'], timeoutMs: 10_000 });
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      const closed = await session.close();
      expect(closed.removed).toEqual([join(ws, '.envrc')]);
    }
    expect(existsSync(join(ws, '.envrc'))).toBe(false);
    expect(containersLabelled(label)).toEqual([]);
  });

  // The session lives on after a command: what it left running can swap a directory for a symlink
  // to a host path between the walk that found a landing and its removal. The removal on the host
  // then followed the link and deleted the host's own files. Now the session is frozen while its
  // landings are found again and removed.
  it("a landing's removal never follows a symlink a process left in the session swaps in", { timeout: 120_000 }, async () => {
    const ws = tempDir();
    const outside = tempDir();
    mkdirSync(join(outside, '.git'));
    writeFileSync(join(outside, '.git', 'keep'), 'the host repo\n');
    const session = await box.openSession({ cwd: ws, env: {}, policy: policy({ write: [ws], writeDeny: [{ pattern: '(.*/)?\\.git(/.*)?' }] }) });
    try {
      // a process left running: it makes the landing d/.git again and again, and swaps d for a link to the host's repo
      const swapper = `while :; do mkdir -p d/.git; echo x > d/.git/HEAD; mv d d.real; ln -s ${outside} d; rm d; mv d.real d; done`;
      await session.exec({ argv: ['sh', '-c', `(${swapper}) </dev/null >/dev/null 2>&1 & echo started`], timeoutMs: 10_000 });
      for (let i = 0; i < 30 && existsSync(join(outside, '.git', 'keep')); i++) await session.exec({ argv: ['true'], timeoutMs: 10_000 });
      expect(existsSync(join(outside, '.git', 'keep'))).toBe(true);
    } finally {
      await session.close();
    }
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

// What a one-shot CLI run starts: the plugins that decide a command's reach, and not the tool
// dispatcher or the built-in tools, which exec, explain and policy never call through.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocal } from './runtime.js';

const root = mkdtempSync(join(tmpdir(), 'aalis-runtime-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const io = { stdout: () => {}, stderr: () => {} };

describe('startLocal', () => {
  it('starts sessions, authority, approval, reach and the terminal approver, and no tool plugin', async () => {
    const dataDir = join(root, 'data');
    const runtime = await startLocal({ tier: 'workspace', boundary: 'ask', cwd: root, allowWrite: [], backend: 'none', data: { dataDir, source: '--data', deployment: undefined }, io });
    try {
      const started = runtime.kernel.status().filter((s) => s.state === 'running').map((s) => s.name);
      expect([...started].sort()).toEqual(['approval', 'authority', 'reach', 'sessions', 'terminal-approver']);
      // the write tools' temp journal (a daemon's clean-up of its own temp files) is not opened
      expect(existsSync(join(dataDir, 'builtin-tools'))).toBe(false);
    } finally {
      await runtime.stop();
    }
  });
});

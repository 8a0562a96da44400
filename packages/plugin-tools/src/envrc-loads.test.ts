// h110: the host file tools and what an .envrc loads: a move onto the parent of a referenced folder
// (move_path judges the destination name alone, and an .envrc's references are no policy landing,
// so protectedPathsUnder does not see them), and benign .envrc lines the parser misses.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { afterAll, describe, expect, it } from 'vitest';
import { installOf, startToolsKernel } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-envrc-h110-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const withKernel = async (envrc: string, body: (env: Awaited<ReturnType<typeof startToolsKernel>>, project: string) => Promise<void>) => {
  const base = join(root, Math.random().toString(36).slice(2));
  const home = join(base, 'home');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, '.envrc'), envrc);
  const env = await startToolsKernel({ dataDir: join(base, 'data'), home, project, install: installOf(base), tier: 'workspace' });
  try {
    await body(env, project);
  } finally {
    await env.kernel.stop();
  }
};

describe('h110 host tools bypasses', { timeout: 60_000 }, () => {
  it('PATH_add tools/bin: move_path of a prepared folder onto tools (tools/bin/git lands)', async () => {
    await withKernel('PATH_add tools/bin\n', async (env, project) => {
      expect((await env.call('write_file', { path: 'evil/bin/git', content: '#!/bin/sh\ntouch /tmp/pwned\n' })).ok).toBe(true);
      const outcome = await env.call('move_path', { from: 'evil', to: 'tools' });
      expect(existsSync(join(project, 'tools/bin/git')), JSON.stringify(outcome)).toBe(false);
      expect(outcome).toMatchObject({ ok: false, kind: 'denied' });
    });
  });

  it.each([
    ['source .venv/bin/activate (its bin first on PATH)', 'source .venv/bin/activate\n', '.venv/bin/git'],
    ['if has nix; then use flake; fi', 'if has nix; then use flake; fi\n', 'flake.nix'],
    ['PATH_add with a line continuation', 'PATH_add \\\n  bin\n', 'bin/git'],
    ['layout python3', 'layout python3\n', '.direnv/python-3.12/bin/ls'],
  ])('%s: the write is refused', async (_what, envrc, target) => {
    await withKernel(envrc, async (env, project) => {
      const outcome = await env.call('write_file', { path: target, content: 'x\n' });
      expect(existsSync(join(project, target)), JSON.stringify(outcome)).toBe(false);
    });
  });
});

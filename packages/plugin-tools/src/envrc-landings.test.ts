// The host's file tools in the sandboxed tiers never write what an `.envrc` above the target makes
// direnv run at the next `cd` (a `PATH_add` folder, a `source_env` file, a `dotenv` file, a local
// flake), as the sandbox's commit refuses it. A real kernel and real files; each write landed before.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { afterAll, describe, expect, it } from 'vitest';
import { installOf, startToolsKernel } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-envrc-tools-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the host file tools and what an .envrc loads', { timeout: 60_000 }, () => {
  it.each([
    ['a PATH_add folder', 'PATH_add bin\n', 'bin/git'],
    ['a source_env file', 'source_env_if_exists .envrc.local\n', '.envrc.local'],
    ['a dotenv file', 'dotenv config/dev.vars\n', 'config/dev.vars'],
    ['a local flake', 'use flake\n', 'flake.nix'],
    ['anything, when it names what cannot be told', 'dotenv "$F"\n', 'src/main.ts'],
  ])('%s is refused', async (_what, envrc, target) => {
    const base = join(root, Math.random().toString(36).slice(2));
    const home = join(base, 'home');
    const project = join(home, 'project');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, '.envrc'), envrc);
    const env = await startToolsKernel({ dataDir: join(base, 'data'), home, project, install: installOf(base), tier: 'workspace' });
    try {
      const outcome = await env.call('write_file', { path: target, content: 'x\n' });
      // asked for as a landing of the policy (plugin-reach reads the main directory's .envrc; no approval here), or refused by the tool's own look
      expect(outcome).toMatchObject({ ok: false, kind: 'denied', message: expect.stringMatching(new RegExp(`${join(project, '.envrc').replaceAll('.', '\\.')} is run by direnv|landing`)) });
      expect(existsSync(join(project, target))).toBe(false);
      if (!envrc.includes('$')) expect((await env.call('write_file', { path: 'notes.txt', content: 'ok\n' })).ok).toBe(true);
    } finally {
      await env.kernel.stop();
    }
  });
});

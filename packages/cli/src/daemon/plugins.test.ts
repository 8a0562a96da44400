// Plugins named in aalis.config.json, loaded into the real daemon (`aalis serve` as a process):
// the scaffolder's example plugin runs its tools through the HTTP API with credentials like the
// built-ins; a plugin with a bad config, one that is missing, one that does not export a plugin and
// one that injects a service nobody provides are each left out and named, and the daemon serves.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const packages = join(import.meta.dirname, '..', '..', '..');
const example = join(packages, 'create-aalis', 'template', 'plugins', 'notes');

/** A deployment directory with the example plugin and the @aalis packages it imports, linked as npm would install them. */
function projectWith(plugins: Record<string, unknown>): string {
  const dir = deploymentDir({ owners: { chat: ['alice'] }, plugins });
  cpSync(example, join(dir, 'plugins', 'notes'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '@aalis'), { recursive: true });
  for (const pkg of ['core', 'plugin-tools', 'plugin-reach']) symlinkSync(join(packages, pkg), join(dir, 'node_modules', '@aalis', pkg));
  symlinkSync(realpathSync(join(packages, 'core', 'node_modules', 'zod')), join(dir, 'node_modules', 'zod'));
  writeFileSync(join(dir, 'plugins', 'bad-config.mjs'), `import { definePlugin } from '@aalis/core';\nimport { z } from 'zod';\nexport default definePlugin({ name: 'strict', config: z.object({ level: z.number() }).strict(), apply() {} });\n`);
  writeFileSync(join(dir, 'plugins', 'orphan.mjs'), `import { defineService, definePlugin } from '@aalis/core';\nexport const plugin = definePlugin({ name: 'orphan', inject: [defineService('weather')], apply() {} });\n`);
  writeFileSync(join(dir, 'plugins', 'nothing.mjs'), 'export const value = 1;\n');
  // A plugin kept inside the workspace, where sandboxed commands may write: its folder becomes control plane.
  mkdirSync(join(dir, 'data', 'workspace', 'own'), { recursive: true });
  writeFileSync(join(dir, 'data', 'workspace', 'own', 'plugin.mjs'), `import { definePlugin } from '@aalis/core';\nexport default definePlugin({ name: 'own', apply() {} });\n`);
  // One whose entry is in dist/: its package.json chooses the entry.
  mkdirSync(join(dir, 'data', 'workspace', 'distplug', 'dist'), { recursive: true });
  writeFileSync(join(dir, 'data', 'workspace', 'distplug', 'package.json'), JSON.stringify({ name: 'distplug', type: 'module', main: 'dist/index.mjs' }));
  writeFileSync(join(dir, 'data', 'workspace', 'distplug', 'dist', 'index.mjs'), `import { definePlugin } from '@aalis/core';\nexport default definePlugin({ name: 'distplug', apply() {} });\n`);
  return dir;
}

describe('plugins in aalis.config.json', () => {
  let dir: string;
  let daemon: ServeProcess;
  beforeAll(async () => {
    dir = projectWith({
      './plugins/notes': { dir: 'my-notes' },
      './plugins/bad-config.mjs': { level: 'high' },
      './plugins/orphan.mjs': {},
      './plugins/nothing.mjs': {},
      './plugins/missing': {},
      './data/workspace/own/plugin.mjs': {},
      './data/workspace/distplug': {},
    });
    daemon = await startServe(dir);
  }, 90_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the good one, names each failing one with its cause, and serves', async () => {
    const status = (await daemon.api('GET', '/api/status')).body;
    const by = Object.fromEntries(status.extensions.map((e: { specifier: string }) => [e.specifier, e]));
    expect(by['./plugins/notes'], JSON.stringify(status.extensions, null, 1)).toMatchObject({ state: 'loaded', name: 'notes' });
    expect(by['./plugins/bad-config.mjs']).toMatchObject({ state: 'failed', name: 'strict', cause: expect.stringContaining('bad config') });
    expect(by['./plugins/orphan.mjs']).toMatchObject({ state: 'failed', name: 'orphan', cause: expect.stringContaining("'weather'") });
    expect(by['./plugins/nothing.mjs']).toMatchObject({ state: 'failed', cause: expect.stringContaining('exports no plugin') });
    expect(by['./plugins/missing']).toMatchObject({ state: 'failed', cause: expect.stringContaining('not found') });
    expect(status.plugins).toContainEqual({ name: 'notes', state: 'running' });
    for (const name of ['strict', 'orphan']) expect(daemon.stderr()).toContain(name);
  });

  it("the plugin's tool runs with the call's credential: writes in the reach, reads back, refuses outside it", async () => {
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('notes-1'), message: 'hi' })).status).toBe(200);
    const saved = await daemon.api('POST', '/api/tools/call', { tool: 'save_note', params: { name: 'todo', text: 'buy milk' }, turn: ownerTurn('notes-1') });
    expect(saved.body, JSON.stringify(saved.body)).toMatchObject({ ok: true });
    const path = saved.body.value.path as string;
    expect(path.endsWith(join('my-notes', 'todo.md'))).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('buy milk');
    const read = await daemon.api('POST', '/api/tools/call', { tool: 'read_note', params: { name: 'todo' }, turn: ownerTurn('notes-1') });
    expect(read.body).toMatchObject({ ok: true, value: { text: 'buy milk' } });
    // readonly: a write is asked; with nobody to answer on the API before the timeout it is refused by the deny boundary
    await daemon.api('POST', '/api/sessions/notes-1/settings', { tier: 'readonly', boundary: 'deny' });
    const refused = await daemon.api('POST', '/api/tools/call', { tool: 'save_note', params: { name: 'other', text: 'x' }, turn: ownerTurn('notes-1') });
    expect(refused.body).toMatchObject({ ok: false, kind: 'denied' });
    expect(existsSync(path.replace('todo.md', 'other.md'))).toBe(false);
  });

  it("a plugin's code is control plane: a sandboxed command cannot change it, even inside the workspace", async () => {
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('notes-2'), message: 'hi' })).status).toBe(200);
    // the tier named: a new conversation starts from the person's last used settings (readonly, above)
    await daemon.api('POST', '/api/sessions/notes-2/settings', { tier: 'workspace', boundary: 'deny' });
    const code = join(dir, 'data', 'workspace', 'own', 'plugin.mjs');
    const before = readFileSync(code, 'utf8');
    const out = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo 'export default 1' > ${code}; echo x > ${join(dir, 'data', 'workspace', 'free.txt')}`, network: 'off' }, turn: ownerTurn('notes-2') });
    expect(out.body, JSON.stringify(out.body)).toMatchObject({ ok: true, value: { where: 'sandbox' } });
    expect(readFileSync(code, 'utf8')).toBe(before);
    expect(readFileSync(join(dir, 'data', 'workspace', 'free.txt'), 'utf8')).toBe('x\n'); // the workspace itself stays writable
    // the whole folder of a plugin named by path, its package.json (which chooses the entry) included
    const pkg = join(dir, 'data', 'workspace', 'distplug', 'package.json');
    const pkgBefore = readFileSync(pkg, 'utf8');
    await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `sed -i 's#dist/index.mjs#evil.mjs#' ${pkg}; echo x > ${join(dir, 'data', 'workspace', 'distplug', 'evil.mjs')}`, network: 'off' }, turn: ownerTurn('notes-2') });
    expect(readFileSync(pkg, 'utf8')).toBe(pkgBefore);
    expect(existsSync(join(dir, 'data', 'workspace', 'distplug', 'evil.mjs'))).toBe(false);
  });

  it('aalis serve --help lists the configured plugins and where each was found', () => {
    const help = spawnSync(process.execPath, [BIN, 'serve', '--help'], { cwd: dir, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Plugins in');
    expect(help.stdout).toMatch(/\.\/plugins\/notes\s+\S+plugins\/notes\/index\.js/);
    expect(help.stdout).toMatch(/\.\/plugins\/missing\s+NOT FOUND/);
  });
});

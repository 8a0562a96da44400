// The scaffolder end to end on a real file system: what it writes, what it refuses, and that the
// config it writes is the one the daemon accepts (its own schema, not a copy).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '@aalis/cli';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from './run.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

const root = mkdtempSync(join(TEST_SCRATCH, 'create-aalis-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function create(args: string[], answers?: string[]) {
  let stdout = '';
  let stderr = '';
  const queue = answers ? [...answers] : undefined;
  const status = await run(args, {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    ...(queue
      ? {
          async ask(q: string) {
            stdout += q;
            return queue.shift();
          },
        }
      : {}),
  });
  return { status, stdout, stderr };
}

const FLAGS = ['--yes', '--owner', 'qq:12345', '--model-url', 'http://127.0.0.1:9/v1', '--model', 'test-model', '--key-env', 'MY_KEY'];

describe('create-aalis', () => {
  it('--yes writes a project whose config the daemon accepts, deps at the released version, the key never written', async () => {
    const dir = join(root, 'bot');
    const r = await create([dir, ...FLAGS, '--sandbox-root', join(root, 'pod-sandbox')]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['.env.example', '.gitignore', 'README.md', 'aalis.config.json', 'package.json', 'plugins']);
    const config = JSON.parse(readFileSync(join(dir, 'aalis.config.json'), 'utf8'));
    const parsed = parseConfig(join(dir, 'aalis.config.json'), config);
    expect(parsed.owners).toEqual({ qq: ['12345'] });
    expect(parsed.plugins).toEqual({ './plugins/notes': { dir: 'notes' } });
    expect(config.pod).toEqual({ sandboxRoot: join(root, 'pod-sandbox'), model: { baseURL: 'http://127.0.0.1:9/v1', model: 'test-model', apiKeyEnv: 'MY_KEY' } });
    // The daemon's agent (and reviewer) talk to the same model: without it every message fails model-not-configured.
    expect(config.model).toEqual({ baseURL: 'http://127.0.0.1:9/v1', model: 'test-model', apiKeyEnv: 'MY_KEY' });
    expect(parsed.model).toMatchObject(config.model);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(pkg.dependencies['@aalis/cli']).toBe('0.1.0');
    expect(pkg.scripts.start).toBe('aalis serve');
    expect(readFileSync(join(dir, '.env.example'), 'utf8')).toMatch(/^MY_KEY=$/m);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('npm install\nnpm start');
    expect(existsSync(join(dir, 'plugins', 'notes', 'index.js'))).toBe(true);
  });

  it('refuses a folder that is not empty and writes nothing into it', async () => {
    const dir = join(root, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'mine.txt'), 'keep');
    const r = await create([dir, ...FLAGS]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is not empty, so nothing was written');
    expect(r.stderr).toContain('fix:');
    expect(readdirSync(dir)).toEqual(['mine.txt']);
  });

  it('never defaults the sandbox root, and refuses one inside the project', async () => {
    const none = join(root, 'no-root');
    expect((await create([none, ...FLAGS])).status).toBe(0);
    expect(JSON.parse(readFileSync(join(none, 'aalis.config.json'), 'utf8')).pod.sandboxRoot).toBeUndefined();
    const inside = join(root, 'inside');
    const r = await create([inside, ...FLAGS, '--sandbox-root', join(inside, 'sandbox')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is the project or inside it');
    expect(existsSync(inside)).toBe(false);
  });

  it.each([
    [['--model-url', 'localhost:11434'], 'model.baseURL'],
    [['--deployment', 'cloud'], 'deployment'],
    [['--key-env', 'my key'], 'model.apiKeyEnv'],
    [['--owner', 'QQ:1'], 'owner.platform'],
    [['--frobnicate'], "unknown option '--frobnicate'; the options are --owner,"],
    [['--tarballs', '/nonexistent-aalis-tarballs'], '--tarballs /nonexistent-aalis-tarballs cannot be listed (ENOENT)'],
  ])('a bad flag %j is a clear error naming %s, and nothing is written', async (extra, named) => {
    const dir = join(root, `bad-${named.replace(/\W/g, '').toLowerCase()}`);
    const r = await create([dir, ...FLAGS, ...extra]);
    expect(r.status).toBeGreaterThan(0);
    expect(r.stderr).toContain(named);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(dir)).toBe(false);
  });

  it('asks for what the flags leave out, at a terminal', async () => {
    const r = await create([], [join(root, 'asked'), 'telegram:42', '', 'docker', 'http://10.0.0.1:8000/v1', 'm', 'K']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Owner (platform:id)');
    const config = JSON.parse(readFileSync(join(root, 'asked', 'aalis.config.json'), 'utf8'));
    expect(config).toMatchObject({ owners: { telegram: ['42'] }, deployment: 'docker', model: { baseURL: 'http://10.0.0.1:8000/v1', model: 'm', apiKeyEnv: 'K' }, pod: { model: { baseURL: 'http://10.0.0.1:8000/v1', model: 'm', apiKeyEnv: 'K' } } });
    expect(config.pod.sandboxRoot).toBeUndefined();
  });
});

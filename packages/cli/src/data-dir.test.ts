// One rule for the data directory, and every command keeping its sandboxed commands away from every
// data directory it can know of: the real `aalis serve` and the real `aalis exec` in bubblewrap.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, deploymentDir, type ServeProcess, startServe } from './daemon/serve-process.testing.js';
import { chooseDataDir } from './data-dir.js';
import { NotUtf8PathError } from './lossy-inputs.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

describe('chooseDataDir: one rule for every command', () => {
  const deployment = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-rule-')));
  writeFileSync(join(deployment, 'aalis.config.json'), '{}');
  const bare = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-rule-bare-')));
  afterAll(() => {
    rmSync(deployment, { recursive: true, force: true });
    rmSync(bare, { recursive: true, force: true });
  });
  const env = { XDG_DATA_HOME: '/xdg/data' };
  it.each([
    ['--data wins', { data: '/d', dir: deployment, env: { ...env, AALIS_DATA: '/e' } }, '/d', '--data'],
    ['then $AALIS_DATA', { dir: deployment, env: { ...env, AALIS_DATA: '/e' } }, '/e', 'AALIS_DATA'],
    ['then --dir', { dir: deployment, env }, join(deployment, 'data'), 'deployment'],
    ['then the deployment found from the current directory', { cwd: deployment, env }, join(deployment, 'data'), 'deployment'],
    ['found from a subdirectory too', { cwd: join(deployment, 'sub', 'dir'), env }, join(deployment, 'data'), 'deployment'],
    ['else the default', { cwd: bare, env }, '/xdg/data/aalis', 'default'],
  ])('%s', (_name, input, dataDir, source) => {
    expect(chooseDataDir(input)).toMatchObject({ dataDir, source });
  });
});

describe('a data directory named in bytes that are not UTF-8', () => {
  // Node decodes argv, the environment and the cwd with U+FFFD for such bytes: the path it hands
  // on names another directory. It was made fresh and used without a word; now it is refused.
  const none = { args: new Set<string>(), env: new Set<string>(), cwd: false };
  const bad = '/srv/d\uFFFD';
  it.each([
    ['--data', { data: bad, lossy: { ...none, args: new Set([bad]) } }, /--data: the argument "\/srv\/d\uFFFD" is not UTF-8/],
    ['$AALIS_DATA', { env: { AALIS_DATA: bad }, lossy: { ...none, env: new Set(['AALIS_DATA']) } }, /AALIS_DATA: \$AALIS_DATA is not UTF-8/],
    ['--dir', { dir: bad, lossy: { ...none, args: new Set([bad]) } }, /--dir: the argument .* is not UTF-8/],
    ['a relative --data in a current directory that is not UTF-8', { data: 'rel', lossy: { ...none, cwd: true } }, /--data: the current directory is not UTF-8/],
    ['the deployment looked up from such a current directory', { env: {}, lossy: { ...none, cwd: true } }, /the deployment directory .*: the current directory is not UTF-8/],
    ['the default under such a $HOME', { cwd: '/', env: { HOME: bad }, lossy: { ...none, env: new Set(['HOME']) } }, /the default data directory: \$HOME is not UTF-8/],
  ])('%s is refused, naming it', (_name, input, message) => {
    let error: unknown;
    try {
      chooseDataDir(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NotUtf8PathError);
    expect(error).toMatchObject({ code: 'bad-path', message: expect.stringMatching(message), fix: expect.stringContaining('UTF-8') });
  });

  it('a name that really holds U+FFFD (its UTF-8 bytes) is a name like any other', () => {
    expect(chooseDataDir({ data: bad, lossy: none })).toMatchObject({ dataDir: bad, source: '--data' });
  });

  it('aalis serve --data with such a byte does not start, says why, and makes no directory', { timeout: 60_000 }, () => {
    const dir = realpathSync(deploymentDir({ owners: { chat: ['alice'] } }));
    const parent = join(dir, 'parent');
    mkdirSync(parent);
    try {
      // the argument's byte 0xff can only be passed by a shell: a JavaScript string goes out as UTF-8
      const r = spawnSync('sh', ['-c', `exec "$0" "$1" serve --dir "$2" --port 0 --data "$(printf '%s/d\\377')"`, process.execPath, BIN, dir, parent], { encoding: 'utf8', timeout: 50_000, env: { ...process.env, NODE_OPTIONS: '--conditions=aalis-source' } });
      // a bad value: exit 2, as every command's
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/aalis serve: --data: the argument .* is not UTF-8/);
      expect(r.stderr).toMatch(/fix: Give a path whose bytes are UTF-8/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(readdirSync(parent)).toEqual([]);
      expect(existsSync(join(dir, 'data'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a sandboxed aalis exec never reads a daemon's data or reaches its port", () => {
  let dir: string;
  let elsewhere: string;
  let state: string;
  let daemon: ServeProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = realpathSync(deploymentDir({ owners: { chat: ['alice'] } }));
    elsewhere = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-elsewhere-')));
    state = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-state-')));
    // The registry and the default data directory of this test's user, away from the machine's.
    env = { XDG_STATE_HOME: join(state, 'state'), XDG_DATA_HOME: join(state, 'share') };
    daemon = await startServe(dir, [], env);
  });
  afterAll(async () => {
    await daemon?.stop();
    for (const path of [dir, elsewhere, state]) if (path) rmSync(path, { recursive: true, force: true });
  });

  function exec(args: string[], cwd: string) {
    const { AALIS_DATA: _, ...rest } = process.env;
    const result = spawnSync(process.execPath, [BIN, 'exec', ...args], { cwd, env: { ...rest, ...env }, encoding: 'utf8', timeout: 120_000 });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it('the token is there, and readable outside the sandbox', () => {
    expect(readFileSync(join(dir, 'data', 'daemon', 'token'), 'utf8').trim()).toBe(daemon.token);
  });

  it.each([
    ['from the deployment directory, by a relative path', () => dir, 'data/daemon/token'],
    ['from the deployment directory, by its full path', () => dir, () => join(dir, 'data', 'daemon', 'token')],
    ['from another directory', () => elsewhere, () => join(dir, 'data', 'daemon', 'token')],
  ])('cat of the token %s is refused by the sandbox', (_name, cwd, file) => {
    const result = exec(['--', 'cat', typeof file === 'function' ? file() : file], cwd());
    expect(result.stdout).not.toContain(daemon.token);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Permission denied|No such file/);
  });

  it("another daemon's tool calls cannot read this daemon's data or reach its port", async () => {
    const other = realpathSync(deploymentDir({ owners: { chat: ['alice'] } }));
    const second = await startServe(other, [], env);
    try {
      const turn = { session: { id: 'chat-other' }, platform: 'chat', speaker: { platform: 'chat', userId: 'alice' }, authorised: { platform: 'chat', userId: 'alice' }, inbound: { id: 'm1' }, category: 'own' };
      const read = await second.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: ['cat', join(dir, 'data', 'daemon', 'token')] }, turn });
      expect(JSON.stringify(read.body)).not.toContain(daemon.token);
      expect(read.body.value?.exitCode ?? 1).not.toBe(0);
      const port = new URL(daemon.url).port;
      const probe = `require('net').connect(${port}, '10.0.2.2').on('connect', () => { console.log('reached'); process.exit(0); }).on('error', (e) => { console.log('refused ' + e.code); process.exit(0); })`;
      const reach = await second.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: [process.execPath, '-e', probe], network: 'on' }, turn });
      expect(reach.body).toMatchObject({ ok: true, value: { stdout: expect.stringMatching(/^refused /) } });
    } finally {
      await second.stop();
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("the daemon's port is refused with --network on, from another directory", () => {
    const port = new URL(daemon.url).port;
    // In the sandbox with network on, the host's 127.0.0.1 is slirp's gateway 10.0.2.2.
    const probe = (host: string) =>
      `require('net').connect(${port}, '${host}').on('connect', () => { console.log('reached'); process.exit(0); }).on('error', (e) => { console.log('refused ' + e.code); process.exit(0); })`;
    const result = exec(['--network', 'on', '--', process.execPath, '-e', probe('10.0.2.2')], elsewhere);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^refused /);
    // From here it is reached: the refusal is the sandbox's.
    expect(spawnSync(process.execPath, ['-e', probe('127.0.0.1')], { encoding: 'utf8' }).stdout).toBe('reached\n');
  });
});

import { execFileSync } from 'node:child_process';
import { instanceNameOf } from '@aalis/sandbox-docker';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userIdOf } from './docker-place.js';
import { deploymentDir, ownerTurn, type ServeProcess, serveOnce, startServe } from './serve-process.testing.js';

// The image packages/sandbox-docker/scripts/prepare.sh builds (also tagged :latest).
const IMAGE = 'aalis/sandbox-test:latest';
// The spaces' names (readable part and digest).
const BOB = userIdOf({ platform: 'chat', userId: 'bob' });
const CAROL = userIdOf({ platform: 'chat', userId: 'carol' });

function engineMissing(): string | undefined {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore', timeout: 20_000 });
    return undefined;
  } catch {
    return `no Docker Engine answers, or it has no ${IMAGE} (bash packages/sandbox-docker/scripts/prepare.sh builds it)`;
  }
}
const missing = engineMissing();
if (missing && process.env.CI !== 'true') console.warn(`skipping the docker deployment tests: ${missing}`);

describe.skipIf(missing !== undefined && process.env.CI !== 'true')('aalis serve: the docker deployment', () => {
  let dir: string;
  let daemon: ServeProcess;
  const env = { AALIS_DEPLOYMENT: 'docker', AALIS_DOCKER_IMAGE: IMAGE };

  beforeAll(async () => {
    dir = deploymentDir({ owners: { chat: ['bob', 'carol'] } });
    daemon = await startServe(dir, [], env);
  }, 90_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is fixed at start from AALIS_DEPLOYMENT and says so', async () => {
    expect(daemon.stderr()).toContain('deployment docker (from AALIS_DEPLOYMENT)');
    expect((await daemon.api('GET', '/api/status')).body).toMatchObject({ deployment: 'docker', backend: 'docker', sandboxWorks: true });
  });

  it("runs each user's commands in a container, in that user's own workspace, which the other user cannot see", async () => {
    const bob = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'pwd; echo bobs > note.txt; cat /proc/1/cmdline | tr "\\0" " "' }, turn: ownerTurn('docker-bob', 'bob') });
    expect(bob.body).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0 } });
    const bobWorkspace = join(dir, 'data', 'workspace', 'users', BOB, 'workspace');
    expect(bob.body.value.stdout.split('\n')[0]).toBe(bobWorkspace);
    expect(readFileSync(join(bobWorkspace, 'note.txt'), 'utf8')).toBe('bobs\n');
    // pid 1 is the container's command, not the host's init.
    expect(bob.body.value.stdout).not.toMatch(/systemd|\/sbin\/init/);

    const carol = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `pwd; cat ${bobWorkspace}/note.txt` }, turn: ownerTurn('docker-carol', 'carol') });
    expect(carol.body.ok).toBe(true);
    expect(carol.body.value.stdout.split('\n')[0]).toBe(join(dir, 'data', 'workspace', 'users', CAROL, 'workspace'));
    expect(carol.body.value.exitCode).not.toBe(0);
    expect(carol.body.value.stdout).not.toContain('bobs');
  });

  it("gives each user their own toolchain caches and session temp, inside their own space; one user's cache is invisible to another", async () => {
    const name = `aalis-cache-probe-${process.pid}-${Date.now()}`;
    const daemonCache = join(homedir(), '.cache', name);
    try {
      const bob = await daemon.api('POST', '/api/tools/call', {
        tool: 'run_command',
        params: { command: `mkdir -p "$HOME/.cache" && echo bobs-cache > "$HOME/.cache/${name}" && echo "$TMPDIR"` },
        turn: ownerTurn('docker-cache-bob', 'bob'),
      });
      expect(bob.body).toMatchObject({ ok: true, value: { exitCode: 0 } });
      const bobSpace = join(dir, 'data', 'workspace', 'users', BOB);

      const carol = await daemon.api('POST', '/api/tools/call', {
        tool: 'run_command',
        params: { command: `cat "$HOME/.cache/${name}" ${daemonCache} ${bobSpace}/home/.cache/${name}; echo end` },
        turn: ownerTurn('docker-cache-carol', 'carol'),
      });
      expect(carol.body.ok).toBe(true);
      expect(carol.body.value.stdout).toBe('end\n');
      expect(carol.body.value.stderr).toMatch(/No such file or directory/);
      expect(existsSync(daemonCache)).toBe(false); // the daemon's own cache is nobody's
      // The session temp is the user's own, not the daemon's tmp/ every user shares.
      const bobTmp = bob.body.value.stdout.trim();
      expect(bobTmp.startsWith(`${bobSpace}/tmp/`) && /\/[0-9a-f]{2}\/session-[0-9a-f]{24}$/.test(bobTmp)).toBe(true);
    } finally {
      rmSync(daemonCache, { force: true });
    }
  });

  it("runs each person's command in a shared conversation in that person's own space, not the first speaker's", async () => {
    const conversation = 'docker-shared';
    const bob = await daemon.api('POST', '/api/tools/call', {
      tool: 'run_command',
      params: { command: 'echo bob-secret > shared-note.txt; echo bob-temp > "$TMPDIR/bob-temp"; pwd' },
      turn: ownerTurn(conversation, 'bob'),
    });
    expect(bob.body).toMatchObject({ ok: true, value: { exitCode: 0 } });
    const bobWorkspace = join(dir, 'data', 'workspace', 'users', BOB, 'workspace');
    expect(bob.body.value.stdout.trim()).toBe(bobWorkspace);

    const carol = await daemon.api('POST', '/api/tools/call', {
      tool: 'run_command',
      params: { command: `pwd; cat shared-note.txt ${bobWorkspace}/shared-note.txt "$TMPDIR/bob-temp"; echo end` },
      turn: ownerTurn(conversation, 'carol'),
    });
    expect(carol.body.ok).toBe(true);
    expect(carol.body.value.stdout).toBe(`${join(dir, 'data', 'workspace', 'users', CAROL, 'workspace')}\nend\n`);
    // The file tools follow the same person: carol's read_file of the note finds none in her workspace.
    const read = await daemon.api('POST', '/api/tools/call', { tool: 'read_file', params: { path: 'shared-note.txt' }, turn: ownerTurn(conversation, 'carol') });
    expect(read.body.ok).toBe(false);
    // Nor can she name Bob's: the host-side tools run in the daemon's process, and reach refuses her every other space.
    const theirs = await daemon.api('POST', '/api/tools/call', { tool: 'read_file', params: { path: join(bobWorkspace, 'shared-note.txt') }, turn: ownerTurn(conversation, 'carol') });
    expect(theirs.body).toMatchObject({ ok: false, message: expect.stringContaining("the docker deployment's person spaces") });
    const list = await daemon.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: join(dir, 'data', 'workspace', 'users') }, turn: ownerTurn(conversation, 'carol') });
    expect(list.body.ok).toBe(false);
  });

  it("lets only a conversation's person (or the console) change its settings, not another owner", async () => {
    const conversation = 'docker-settings';
    const settings = `/api/sessions/${conversation}/settings`;
    expect((await daemon.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: '.' }, turn: ownerTurn(conversation, 'bob') })).body).toMatchObject({ ok: true });
    const before = (await daemon.api('GET', settings)).body;
    const carol = await daemon.api('POST', settings, { tier: 'full', by: { platform: 'chat', userId: 'carol' } });
    expect(carol).toMatchObject({ status: 403, body: { error: { code: 'not-theirs' } } });
    expect((await daemon.api('GET', settings)).body).toEqual(before);
    expect((await daemon.api('POST', settings, { tier: 'workspace', by: { platform: 'chat', userId: 'bob' } })).status).toBe(200);
    // the console acts as the admin
    expect((await daemon.api('POST', settings, { tier: 'readonly' })).status).toBe(200);
  });

  it('runs the read-only tier as uid 10001, which can write its session temp', async () => {
    const turn = ownerTurn('docker-readonly', 'bob');
    await daemon.api('POST', '/api/turns', { turn });
    expect((await daemon.api('POST', '/api/sessions/docker-readonly/settings', { tier: 'readonly' })).status).toBe(200);
    const result = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'id -u; echo x > "$TMPDIR/y" && echo tmp-ok' }, turn });
    expect(result.body).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0, stdout: '10001\ntmp-ok\n', stderr: '' } });
  });

  it("shares the engine with a second daemon (another data directory, the default config): neither's start or stop touches the other's containers", async () => {
    const instanceA = instanceNameOf(join(dir, 'data'));
    const running = () =>
      execFileSync('docker', ['ps', '--quiet', '--filter', 'status=running', '--filter', `label=dev.aalis.instance=${instanceA}`], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.trim() !== '');
    const started = await daemon.api('POST', '/api/tools/call', { tool: 'run_command_background', params: { command: 'sleep 400' }, turn: ownerTurn('docker-side-by-side', 'bob') });
    expect(started.body.ok).toBe(true);
    // 400 s: it must outlive a second daemon's start (up to 45 s under load), a call and a stop
    const end = Date.now() + 60_000;
    while (running().length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    const [mine] = running();
    expect(mine).toBeDefined();

    const dirB = deploymentDir({ owners: { chat: ['bob'] } });
    try {
      const second = await startServe(dirB, [], env);
      expect(running()).toEqual([mine]); // its start reaped nothing of ours
      const other = await second.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo b' }, turn: ownerTurn('docker-b', 'bob') });
      expect(other.body).toMatchObject({ ok: true, value: { stdout: 'b\n' } });
      expect(await second.stop()).toBe(0);
      expect(running()).toEqual([mine]); // nor did its stop
    } finally {
      rmSync(dirB, { recursive: true, force: true });
    }
  }, 120_000);

  it('does not start without an image, and says how to get one (fail closed)', async () => {
    const bare = deploymentDir({});
    try {
      const result = await serveOnce(['--dir', bare, '--port', '0', '--deployment', 'docker'], { AALIS_DOCKER_IMAGE: '' });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('the docker deployment has no image');
      expect(result.stderr).toContain('AALIS_DOCKER_IMAGE');
      expect(existsSync(join(bare, 'data', 'daemon', 'token'))).toBe(false);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});

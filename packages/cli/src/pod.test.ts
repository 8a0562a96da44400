// `aalis pod` against a real daemon (the real binary, `aalis serve`) through its /api/pod routes.
// No model is configured here, so a task is refused for that: what is tested is that the CLI
// reaches the daemon's pod, reads its address and token from the data directory, and reports
// the pod's own refusals. The pod's agent is tested end to end in @aalis/plugin-pod.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, deploymentDir, type ServeProcess, startServe } from './daemon/serve-process.testing.js';

const dir = deploymentDir({ pod: { sandboxRoot: '/var/tmp' } });
const box = join(dir, 'box');
mkdirSync(box);
let daemon: ServeProcess;
beforeAll(async () => {
  daemon = await startServe(dir, ['--port', '0']);
}, 120_000);
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function pod(args: string[], cwd = dir, env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [BIN, 'pod', ...args], { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, AALIS_TOKEN: '', ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('aalis pod', () => {
  it('finds the daemon from the deployment directory and lists its tasks', () => {
    const result = pod(['list', '--json']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
  });

  it("sets the sandbox root through the daemon and reports the pod's refusals with their rule", () => {
    const root = pod(['root', box]);
    expect(root.status).toBe(0);
    expect(root.stdout).toContain(box);
    const run = pod(['run', 'make a CSV']);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/refused \(no-model\)/);
  });

  // What the pod prints comes from tasks (a model's reply, a file's name): a path the daemon echoes
  // stands in here for that text (no model runs in this file); the escaping is the same for all.
  it('prints control characters from the daemon as escapes, and keeps --json valid', () => {
    const odd = join(box, 'odd\u001b[2K\rname\u202e');
    mkdirSync(odd);
    const root = pod(['root', odd]);
    expect(root.status).toBe(0);
    expect(root.stdout).toContain('odd\\u001b[2K\\u000dname\\u202e');
    expect(root.stdout).not.toMatch(/[\u001b\r\u202e]/);
    expect(pod(['root', box]).status).toBe(0);
  });

  it('says how to start the daemon when there is none', () => {
    const elsewhere = deploymentDir();
    try {
      // a home of its own: the default data directory of the machine's user may hold a daemon's address
      const home = join(elsewhere, 'home');
      mkdirSync(home);
      const result = pod(['list'], elsewhere, { HOME: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data'), AALIS_DATA: '' });
      // a daemon that is not there is the command's failure (1), not its usage; the help needs none
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("is 'aalis serve' running for this deployment?");
      for (const help of [['help'], ['list', '--help']]) expect(pod(help, elsewhere, { HOME: home, XDG_STATE_HOME: join(home, 'state'), XDG_DATA_HOME: join(home, 'data'), AALIS_DATA: '' }).status).toBe(0);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe("the daemon's routes and the pod's routes it mounts", () => {
  async function raw(path: string, contentType: string, body: string) {
    const res = await fetch(`${daemon.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}`, 'content-type': contentType }, body });
    return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } };
  }

  it.each([
    ['a body that is not JSON', 'text/plain', 'task=x', 415, 'unsupported-media-type'],
    ['JSON that does not parse', 'application/json', '{not json', 400, 'invalid-body'],
  ])('answer %s with the same status and envelope (core’s one table)', async (_what, type, body, status, code) => {
    const own = await raw('/api/turns', type, body);
    const pods = await raw('/api/pod/tasks', type, body);
    expect(own).toMatchObject({ status, body: { error: { code } } });
    expect(pods).toMatchObject({ status, body: { error: { code } } });
    expect(Object.keys(pods.body)).toEqual(Object.keys(own.body));
  });

  it('answer a route that is not there with the same status and code', async () => {
    const own = await daemon.api('GET', '/api/nothing-here');
    const pods = await daemon.api('GET', '/api/pod/nothing-here');
    expect(own).toMatchObject({ status: 404, body: { error: { code: 'not-found' } } });
    expect(pods).toMatchObject({ status: 404, body: { error: { code: 'not-found' } } });
  });
});

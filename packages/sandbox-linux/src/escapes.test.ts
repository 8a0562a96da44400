import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ESCAPES } from './escapes.corpus.js';
import { makeScene, req, type Scene, snapshot, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const SECRETS = ['PRIVATE KEY', 'SECRET=1', 'DAEMON-GREETING', 'aalis-daemon-token', '/daemon-agent.sock'];
const sb = createLinuxSandbox();
let s: Scene;
let daemon: Server;
let port = 0;
const saved = { AALIS_TOKEN: process.env.AALIS_TOKEN, SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK };

beforeAll(async () => {
  s = makeScene();
  // the daemon's own secrets, in its environment: nothing of it may reach the sandbox
  process.env.AALIS_TOKEN = 'aalis-daemon-token';
  process.env.SSH_AUTH_SOCK = '/run/user/0/daemon-agent.sock';
  daemon = createServer((c) => c.end('DAEMON-GREETING\n'));
  await new Promise<void>((r) => daemon.listen(0, '127.0.0.1', () => r()));
  port = (daemon.address() as { port: number }).port;
});
afterAll(() => {
  daemon.close();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  s.cleanup();
});

const fill = (cmd: string) =>
  cmd
    .replaceAll('{ws}', s.ws)
    .replaceAll('{home}', s.home)
    .replaceAll('{root}', s.root)
    .replaceAll('{control}', s.control)
    .replaceAll('{port}', String(port))
    .replaceAll('{ppid}', String(process.pid));

describe('escape corpus: each attempt is refused and nothing is written', { timeout: 120_000 }, () => {
  it.each(ESCAPES.map((e) => [e.id, e] as const))('%s', async (_, attempt) => {
    const before = snapshot(s.root);
    // the environment a credential gives a sandboxed command: the daemon's, less AALIS_* and SSH_AUTH_SOCK
    const env = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith('AALIS_') && k !== 'SSH_AUTH_SOCK')) as Record<string, string>;
    const policy = workspacePolicy(s, { localPorts: [port], ...(attempt.network ? { network: attempt.network } : {}) });
    const r = await sb.run(req(s, ['sh', '-c', fill(attempt.run)], { env: { ...env, HOME: s.home, LANG: 'C' }, policy }));
    for (const name of readdirSync(s.ws)) if (name.startsWith('x-')) rmSync(join(s.ws, name), { recursive: true, force: true });
    expect(snapshot(s.root)).toEqual(before);
    for (const secret of SECRETS) expect(r.stdout + r.stderr).not.toContain(secret);
    for (const p of attempt.outside ?? []) expect(existsSync(p)).toBe(false);
  });
});

describe('the corpus check itself', { timeout: 120_000 }, () => {
  it('sees a write and a leaked secret when the policy does let them through', async () => {
    const before = snapshot(s.root);
    const open = { ...workspacePolicy(s), readDeny: [], write: [s.root], writeDeny: [], controlDeny: [] };
    const r = await sb.run(req(s, ['sh', '-c', fill('echo pwned >> {home}/.bashrc; cat {ws}/.env')], { policy: open }));
    expect(snapshot(s.root)).not.toEqual(before);
    expect(r.stdout).toContain('SECRET=1');
  });
});

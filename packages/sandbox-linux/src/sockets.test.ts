import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/** A runtime directory of our own under /run, as a daemon would have; only where /run is writable (root). */
function runWritable(): boolean {
  try {
    accessSync('/run', constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

const sb = createLinuxSandbox();
const servers: Server[] = [];
let s: Scene;
let dir = '';

function listen(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer((c) => c.end('hello\n'));
    servers.push(srv);
    srv.once('error', reject);
    srv.listen(path, () => resolve());
  });
}

const connect = (path: string): [string, ...string[]] => [
  'python3',
  '-c',
  `import socket\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(${JSON.stringify(path)}); print(s.recv(10).decode().strip())\nexcept Exception as e: print(type(e).__name__)`,
];

beforeAll(() => {
  s = makeScene();
});
afterAll(() => {
  for (const srv of servers) srv.close();
  s.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!runWritable())('a runtime directory with several sockets', { timeout: 60_000 }, () => {
  it('is hidden whole with one mount: its sockets refuse, its files are gone, name resolution still works', async () => {
    dir = mkdtempSync('/run/aalis-test-');
    mkdirSync(join(dir, 'sub'));
    await listen(join(dir, 'a.sock'));
    await listen(join(dir, 'sub', 'b.sock'));
    writeFileSync(join(dir, 'daemon.pid'), '1\n');
    const plan = sb.plan(req(s, ['true']).policy, s.ws);
    expect(plan.mounts.filter((m) => m.path.startsWith(dir))).toEqual([{ path: dir, state: 'hidden', kind: 'dir', why: 'socket' }]);
    // the same sockets answer outside the sandbox
    expect(await sb.run(req(s, connect(join(dir, 'a.sock')), { policy: { ...req(s, ['true']).policy, unixSockets: [dir] } })).then((r) => r.stdout.trim())).toBe('hello');
    for (const sock of [join(dir, 'a.sock'), join(dir, 'sub', 'b.sock')]) {
      expect((await sb.run(req(s, connect(sock)))).stdout.trim()).toBe('FileNotFoundError');
    }
    const ls = await sb.run(req(s, ['ls', '-A', dir]));
    expect(ls.stdout).toBe('');
    const resolv = await sb.run(req(s, ['cat', '/etc/resolv.conf']));
    expect(resolv.stdout).toBe(readFileSync('/etc/resolv.conf', 'utf8'));
  });
});

import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const sb = createLinuxSandbox();
let s: Scene;
const servers: Server[] = [];

function listen(where: string | { host: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer((c) => c.end('hello\n'));
    servers.push(srv);
    srv.once('error', reject);
    if (typeof where === 'string') srv.listen(where, () => resolve(0));
    else srv.listen(0, where.host, () => resolve((srv.address() as { port: number }).port));
  });
}

/** A python one-liner that connects and prints what it got, or the error's class. */
function connect(target: string): [string, ...string[]] {
  const [kind, a, b] = target.split('|');
  const code =
    kind === 'unix'
      ? `import socket\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(${JSON.stringify(a)}); print(s.recv(10).decode().strip())\nexcept Exception as e: print(type(e).__name__)`
      : `import socket\ntry:\n s=socket.create_connection((${JSON.stringify(a)},${b}),timeout=3); print(s.recv(10).decode().strip())\nexcept Exception as e: print(type(e).__name__)`;
  return ['python3', '-c', code];
}

const external = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

beforeAll(() => {
  s = makeScene();
});
afterAll(() => {
  for (const srv of servers) srv.close();
  s.cleanup();
});

describe('network', { timeout: 120_000 }, () => {
  it('off: no network at all, not even the host loopback', async () => {
    const lo = await listen({ host: '127.0.0.1' });
    const r = await sb.run(req(s, connect(`tcp|127.0.0.1|${lo}`)));
    expect(r.stdout.trim()).toBe('ConnectionRefusedError'); // the sandbox's own, empty loopback
    const ext = await sb.run(req(s, ['sh', '-c', 'ip -o link | grep -v " lo:" | wc -l']));
    expect(ext.stdout.trim()).toBe('0');
  });

  // "Outbound" is a listener on this machine's non-loopback address: the only non-loopback
  // target this workplace allows. Without such an address the outbound half cannot be shown.
  it.skipIf(!external)('on: outbound IP works, the localPorts on the host loopback are refused', async () => {
    const out = await listen({ host: external! });
    const denied = await listen({ host: '127.0.0.1' });
    const other = await listen({ host: '127.0.0.1' });
    const policy = workspacePolicy(s, { network: 'on', localPorts: [denied] });
    const run = (t: string) => sb.run(req(s, connect(t), { policy })).then((r) => r.stdout.trim());
    expect(await run(`tcp|${external}|${out}`)).toBe('hello');
    // the host loopback is reached only through slirp's gateway, which is switched off
    expect(await run(`tcp|10.0.2.2|${denied}`)).toMatch(/OSError|ConnectionRefusedError/);
    expect(await run(`tcp|127.0.0.1|${denied}`)).toBe('ConnectionRefusedError');
    // stricter than the contract: a loopback port outside localPorts is unreachable as well
    expect(await run(`tcp|10.0.2.2|${other}`)).toMatch(/OSError|ConnectionRefusedError/);
  });
});

describe('unix sockets', { timeout: 120_000 }, () => {
  it('connects only to sockets under unixSockets; one elsewhere is refused though its directory is readable', async () => {
    const outsideDir = join(s.root, 'agent');
    mkdirSync(outsideDir);
    const outside = join(outsideDir, 'agent.sock');
    const inside = join(s.ws, 'dev.sock');
    await listen(outside);
    await listen(inside);
    const ls = await sb.run(req(s, ['ls', outsideDir]));
    expect(ls.stdout.trim()).toBe('agent.sock'); // reads there are allowed
    expect((await sb.run(req(s, connect(`unix|${inside}`)))).stdout.trim()).toBe('hello');
    expect((await sb.run(req(s, connect(`unix|${outside}`)))).stdout.trim()).toBe('ConnectionRefusedError');
    // a socket the daemon itself listens on, e.g. its control socket in the data dir
    const ctl = join(s.control, 'daemon.sock');
    await listen(ctl);
    expect((await sb.run(req(s, connect(`unix|${ctl}`)))).stdout.trim()).toBe('ConnectionRefusedError');
  });
});

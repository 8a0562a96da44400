// One adapter's token holds at most ADAPTER_MAX_REQUESTS requests open at once, against a real
// `aalis serve` over real sockets. With none, an adapter that opened 1,200 POST /api/turns sending
// a byte every 4 s took every descriptor of a daemon under `ulimit -n 1024`, and the owner's own
// calls failed while they were held (found by an attack, h105).
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTER_MAX_REQUESTS } from './daemon.js';
import { deploymentDir, type ServeProcess, startServe } from './serve-process.testing.js';

let dir: string;
let daemon: ServeProcess;
let token: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  dir = deploymentDir({ owners: { chat: ['alice'] } });
  daemon = await startServe(dir);
  token = (await daemon.api('POST', '/api/adapters', { name: 'slow-bridge', platform: 'telegram' })).body.token;
}, 120_000);
afterAll(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A request with the adapter's token whose body never finishes; resolves once it is sent, with what the daemon answered so far. */
function slowTurn(): Promise<{ readonly socket: Socket; received(): string; readonly closed: Promise<void> }> {
  const { port } = new URL(daemon.url);
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(`POST /api/turns HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"turn":`);
      resolve({ socket, received: () => text, closed });
    });
    sockets.push(socket);
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
  });
}

describe("an adapter's open requests", () => {
  it('past the most one adapter may hold, the next is refused at once (429, closed); the owner is answered meanwhile; freed, it is taken again', { timeout: 60_000 }, async () => {
    const held = [];
    for (let i = 0; i < ADAPTER_MAX_REQUESTS; i++) held.push(await slowTurn());
    // wait until the daemon has taken them all (each has its headers in and waits for its body)
    for (let tries = 0; tries < 50; tries++) {
      const over = await slowTurn();
      const end = await Promise.race([over.closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('open'), 1_000))]);
      if (end === 'closed') {
        expect(over.received()).toMatch(/^HTTP\/1\.1 429 /);
        expect(over.received()).toContain(`adapter 'slow-bridge' has ${ADAPTER_MAX_REQUESTS} requests open at once`);
        break;
      }
      over.socket.destroy(); // not counted yet: the daemon had not read all the held ones' headers
      await new Promise((r) => setTimeout(r, 200));
      if (tries === 49) throw new Error('the request past the limit was never refused');
    }
    expect((await daemon.api('GET', '/api/status')).status).toBe(200);
    for (const h of held) h.socket.destroy();
    // freed: the adapter's requests are taken again
    for (let tries = 0; ; tries++) {
      const listed = await daemon.api('GET', '/api/sessions', undefined, token);
      if (listed.status === 200) break;
      expect(listed.status).toBe(429);
      if (tries > 50) throw new Error('the adapter stayed refused after its requests ended');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});

// Bodies sent without a token, against a real `aalis serve` over real sockets. Any local user can
// post a console claim: 1,500 connections that sent a claim's headers and never finished its body
// were all kept past 35 s, and 200 holding a megabyte each took 180 MB (found by an attack). Now a
// claim's body is small and prompt or refused, and the connection is closed.
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPEN_BODY_DEADLINE_MS, OPEN_BODY_MAX_BYTES } from './connection-guard.js';
import { deploymentDir, type ServeProcess, startServe } from './serve-process.testing.js';

let dir: string;
let daemon: ServeProcess;
const sockets: Socket[] = [];

beforeAll(async () => {
  dir = deploymentDir({ owners: { chat: ['alice'] } });
  daemon = await startServe(dir);
}, 120_000);
afterAll(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Raw {
  readonly socket: Socket;
  /** What the daemon sent, so far. */
  received(): string;
  /** Resolves when the daemon closed the connection, with the ms since it was opened. */
  readonly closed: Promise<number>;
}

/** A connection to the daemon that sends `head` (and nothing more, unless the test writes it). */
function raw(head: string): Promise<Raw> {
  const { port } = new URL(daemon.url);
  return new Promise((resolve) => {
    let text = '';
    const opened = Date.now();
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(head);
      resolve({ socket, received: () => text, closed });
    });
    sockets.push(socket);
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => {});
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - opened)));
  });
}

const claimHead = (headers: string) => `POST /api/console/claim HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}\r\n`;

describe('a body sent without a token', () => {
  it('is cut when it does not arrive within the deadline: 408, and the connection closed', { timeout: 30_000 }, async () => {
    const slow = await raw(claimHead('Content-Length: 60\r\n'));
    slow.socket.write('{"id":'); // and never the rest
    const took = await slow.closed;
    expect(took).toBeGreaterThanOrEqual(OPEN_BODY_DEADLINE_MS - 100);
    expect(took).toBeLessThan(OPEN_BODY_DEADLINE_MS + 3_000);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(slow.received()).toMatch(/"code":"too-slow".*did not arrive within 5000 ms/);
  });

  it('is refused at once when it declares more than the limit (413), nothing read; chunked, once past it', { timeout: 30_000 }, async () => {
    const declared = await raw(claimHead('Content-Length: 1048576\r\n'));
    await declared.closed;
    expect(declared.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(declared.received()).toContain(`the body is larger than ${OPEN_BODY_MAX_BYTES} bytes, the most this route reads`);

    const chunked = await raw(claimHead('Transfer-Encoding: chunked\r\n'));
    const piece = 'x'.repeat(1000);
    for (let i = 0; i < 5; i++) chunked.socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
    const took = await chunked.closed;
    expect(took).toBeLessThan(3_000);
    expect(chunked.received()).toMatch(/^HTTP\/1\.1 413 /);
  });

  it("keeps no unfinished claim past the guard's limit, while the owner's requests are answered", { timeout: 60_000 }, async () => {
    // more unfinished claims than the guard lets wait: the oldest are closed long before the deadline
    const flood: Raw[] = [];
    for (let i = 0; i < 300; i++) {
      const r = await raw(claimHead('Content-Length: 60\r\n'));
      r.socket.write('{');
      flood.push(r);
    }
    const early = await Promise.race([flood[0]!.closed, new Promise<number>((r) => setTimeout(() => r(-1), OPEN_BODY_DEADLINE_MS - 1_000))]);
    expect(early).toBeGreaterThan(0);
    const status = await daemon.api('GET', '/api/status');
    expect(status.status).toBe(200);
    // a claim sent whole is answered (an unknown code: 401), the owner's way still open
    const claim = await fetch(`${daemon.url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'a'.repeat(32), for: 'console' }) });
    expect([400, 401]).toContain(claim.status);
    for (const r of flood) r.socket.destroy();
  });
});

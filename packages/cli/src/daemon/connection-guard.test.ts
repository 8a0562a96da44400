import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { guardConnections, HEADERS_TIMEOUT_MS } from './connection-guard.js';

// Any local user can connect to the daemon's loopback port without the token. One who opened
// 20,000 connections and sent half a header on each left the daemon unable to accept its owner's.
// A real server and real sockets here: the guard closes the connections that waited longest once
// too many wait, and a client that sends its request at once is answered.
let server: Server | undefined;
const open: Socket[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function listening(max: number): Promise<number> {
  server = createServer((_req, res) => res.end('answered\n'));
  guardConnections(server, max);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** A connection that sends half a request's headers and nothing more; resolves once connected. */
function halfHeader(port: number): Promise<Socket & { closedAt?: number }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /api/status HTTP/1.1\r\nHost: x\r\n');
      resolve(socket);
    }) as Socket & { closedAt?: number };
    socket.on('error', () => {});
    socket.on('close', () => (socket.closedAt = Date.now()));
    open.push(socket);
  });
}

describe('guardConnections', () => {
  it('closes the connections waiting longest for their headers past the limit; one that sends its request is answered', async () => {
    const port = await listening(8);
    const flood: (Socket & { closedAt?: number })[] = [];
    for (let i = 0; i < 20; i++) flood.push(await halfHeader(port));
    await new Promise((r) => setTimeout(r, 200));
    const closed = flood.map((s, i) => [i, s.closedAt !== undefined] as const);
    // the oldest 12 were closed, the newest 8 still wait
    expect(closed.filter(([, c]) => c).map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    expect(await answer.text()).toBe('answered\n');
  });

  it('never closes a connection whose request was admitted (a long call, the event stream)', async () => {
    server = createServer((req) => guard.admit(req)); // admits, and never answers: the request stays open
    const guard = guardConnections(server, 2);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const long = await new Promise<Socket & { closedAt?: number }>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
        resolve(s);
      }) as Socket & { closedAt?: number };
      s.on('close', () => (s.closedAt = Date.now()));
      open.push(s);
    });
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 6; i++) await halfHeader(port);
    await new Promise((r) => setTimeout(r, 200));
    expect(long.closedAt).toBeUndefined();
  });

  it('counts a kept-alive connection idle after its answer as waiting again: a flood of them is closed, oldest first', async () => {
    const port = await listening(4);
    // each sends one whole request, reads its answer, and stays open (keep-alive), idle
    const idle: (Socket & { closedAt?: number })[] = [];
    for (let i = 0; i < 10; i++) {
      const s = await halfHeader(port);
      await new Promise<void>((r) => {
        s.once('data', () => r());
        s.write('\r\n'); // completes the request the helper began
      });
      idle.push(s);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(idle.map((s) => s.closedAt !== undefined)).toEqual([true, true, true, true, true, true, false, false, false, false]);
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    expect(await answer.text()).toBe('answered\n');
  });

  it('gives a client 10 s for its headers, not the 60 s default', async () => {
    await listening(8);
    expect(server!.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
  });

  // A request nobody vouched for (a claim needs no token) is not kept for its sender: one that sent
  // its headers and never its body was kept forever, 1,500 of them at once (found by an attack).
  it('closes a connection whose request was never admitted as one waiting, oldest first', async () => {
    server = createServer(() => {}); // never admits, never answers
    guardConnections(server, 2);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const unfinished = await new Promise<Socket & { closedAt?: number }>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.write('POST /api/console/claim HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n{');
        resolve(s);
      }) as Socket & { closedAt?: number };
      s.on('error', () => {});
      s.on('close', () => (s.closedAt = Date.now()));
      open.push(s);
    });
    await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 3; i++) await halfHeader(port);
    await new Promise((r) => setTimeout(r, 200));
    expect(unfinished.closedAt).toBeDefined();
  });
});

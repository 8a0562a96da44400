import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How many connections may wait at once for their first request's headers (see {@link guardConnections}). */
export const MAX_WAITING_CONNECTIONS = 256;

/** How long a connection may take to send a request's headers (ms). Node's default is 60 s. */
export const HEADERS_TIMEOUT_MS = 10_000;

/**
 * Keeps connections that have sent no request yet from using up the daemon's descriptors. The
 * port is on loopback, so any local user can connect without the token: one who opened 20,000
 * connections and sent half a header on each left the daemon unable to accept its owner's (found
 * by an attack; it answered again only once the flood stopped). Past
 * {@link MAX_WAITING_CONNECTIONS} waiting at once, the one waiting longest is closed: a client
 * sends its headers as soon as it connects, so a flood can only push out connections that sat
 * silent behind 256 newer ones. A connection inside a request is never closed here (a long tool
 * call, the event stream); one kept alive after its answer waits again, as a new one does.
 */
export function guardConnections(server: Server, maxWaiting = MAX_WAITING_CONNECTIONS): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  // insertion order: the first is the one waiting longest
  const waiting = new Set<Socket>();
  /** `socket` waits (again), the newest; past the limit the one waiting longest is closed. */
  const wait = (socket: Socket) => {
    waiting.add(socket);
    if (waiting.size <= maxWaiting) return;
    const oldest = waiting.values().next().value as Socket;
    waiting.delete(oldest);
    oldest.destroy();
  };
  server.on('connection', (socket: Socket) => {
    socket.once('close', () => waiting.delete(socket));
    wait(socket);
  });
  // inside a request a connection is never closed here; once its answer is out it waits again (a
  // kept-alive connection idle after a 404 was no longer counted, and a flood of them took 17,000
  // of the daemon's 20,000 descriptors: found by an attack)
  server.on('request', (req, res) => {
    const socket = req.socket;
    waiting.delete(socket);
    res.once('finish', () => {
      if (!socket.destroyed) wait(socket);
    });
  });
}

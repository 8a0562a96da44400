import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How many connections may wait at once for their first request's headers (see {@link guardConnections}). */
export const MAX_WAITING_CONNECTIONS = 256;

/** How long a connection may take to send a request's headers (ms). Node's default is 60 s. */
export const HEADERS_TIMEOUT_MS = 10_000;

/**
 * The most a body sent without a token may have (bytes): a console claim's is under 100. Whoever
 * can connect can send one, so none is held for long or large (see {@link guardConnections}).
 */
export const OPEN_BODY_MAX_BYTES = 4096;

/** How long a body sent without a token may take to arrive (ms): a page's claim sends it at once. */
export const OPEN_BODY_DEADLINE_MS = 5_000;

/** What {@link guardConnections} gives the server's handler. */
export interface ConnectionGuard {
  /**
   * The request is its sender's whom the daemon trusts (it presented a token or a pod capability):
   * its connection is kept however long the request takes (a long tool call, the event stream),
   * until its answer is out.
   */
  admit(req: IncomingMessage): void;
}

/**
 * Keeps connections nobody has vouched for from using up the daemon's descriptors. The port is on
 * loopback, so any local user can connect without the token: one who opened 20,000 connections
 * and sent half a header on each left the daemon unable to accept its owner's (found by an
 * attack; it answered again only once the flood stopped). Past {@link MAX_WAITING_CONNECTIONS}
 * waiting at once, the one waiting longest is closed: a client sends its request as soon as it
 * connects, so a flood can only push out connections that sat silent behind 256 newer ones.
 *
 * A connection waits until its request is admitted ({@link ConnectionGuard.admit}), not merely
 * until its headers are in: 1,500 connections that sent a claim's headers (which need no token)
 * and never finished its body were all kept, and 200 of them holding a megabyte each took 180 MB
 * (found by an attack). An admitted request's connection is never closed here; one kept alive
 * after its answer waits again, as a new one does.
 */
export function guardConnections(server: Server, maxWaiting = MAX_WAITING_CONNECTIONS): ConnectionGuard {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  // insertion order: the first is the one waiting longest
  const waiting = new Set<Socket>();
  /** `socket` waits (again), the newest; past the limit the one waiting longest is closed. */
  const wait = (socket: Socket) => {
    waiting.delete(socket);
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
  // once its answer is out a connection waits again (a kept-alive connection idle after a 404 was
  // no longer counted, and a flood of them took 17,000 of the daemon's 20,000 descriptors: found
  // by an attack)
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    res.once('finish', () => {
      if (!socket.destroyed) wait(socket);
    });
  });
  return {
    admit(req) {
      waiting.delete(req.socket);
    },
  };
}

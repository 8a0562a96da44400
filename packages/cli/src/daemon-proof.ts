import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AalisError } from '@aalis/core';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { type ProofAddress, proofAddressOf, proofOf } from './daemon/token.js';

/** The server at a daemon's address could not prove it knows the token: the token was not sent. */
export class NotTheDaemonError extends AalisError<'not-the-daemon'> {
  override readonly name = 'NotTheDaemonError';
}

/**
 * Asks the server at `url` to prove it knows `token` (`GET /api/proof`, daemon/token.ts's
 * `proofOf`) before a request carries the token: a stopped daemon's url and token stay where a
 * client reads them, or in `AALIS_TOKEN`, and another local user may listen on its port by then.
 * The proof names the address the connection was made to, and this checks it against the one this
 * client reached: a server relaying the question to a daemon elsewhere that holds the same token is
 * found out. Called before every request that sends the token (one round trip on the loopback).
 * Resolves to the proven address as a base URL (an IP literal and the port): the request that
 * carries the token must go there, never to the name again, which may resolve to another address
 * on a new connection (found by an attack: `localhost` proved on 127.0.0.1, then the token went to
 * a server another user had started on `[::1]`, 9 of 10). Throws {@link NotTheDaemonError} when
 * the proof is wrong or missing, a plain error when nothing answers.
 */
export async function proveDaemon(url: string, token: string): Promise<string> {
  const nonce = randomBytes(32).toString('hex');
  let answer: { status: number; body: string; reached: ProofAddress };
  try {
    answer = await getWithPeer(new URL(`/api/proof?nonce=${nonce}`, url));
  } catch (error) {
    throw new Error(`the daemon at ${url} does not answer (${(error as Error).message}); start it with 'aalis serve'.`);
  }
  let body: { proof?: unknown } | undefined;
  try {
    body = JSON.parse(answer.body) as { proof?: unknown };
  } catch {
    body = undefined;
  }
  const expected = Buffer.from(proofOf(token, nonce, answer.reached), 'hex');
  const given = typeof body?.proof === 'string' && /^[0-9a-f]{64}$/.test(body.proof) ? Buffer.from(body.proof, 'hex') : undefined;
  if (given === undefined || !timingSafeEqual(given, expected)) {
    throw new NotTheDaemonError(
      'not-the-daemon',
      `the server at ${url} could not prove it is the daemon whose token this is (it answered ${answer.status}${given === undefined ? ' without a proof' : ' with a wrong proof'}): the daemon may have stopped and something else listens on its port, something relays to a daemon elsewhere, or the token is another daemon's (or an adapter's: 'aalis' commands need the daemon's own token). The token was not sent.`,
      { fix: "start the daemon again ('aalis serve'), or give the right --url and AALIS_TOKEN (the daemon's, from <data>/daemon/token, not an adapter's)" },
    );
  }
  const { address, port } = answer.reached;
  return `${new URL(url).protocol}//${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/** One GET, with the address the connection reached (what the proof must name). */
function getWithPeer(url: URL): Promise<{ status: number; body: string; reached: ProofAddress }> {
  const get = url.protocol === 'https:' ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const req = get(url, { timeout: 30_000 }, (res) => {
      const reached = proofAddressOf(res.socket.remoteAddress ?? '', res.socket.remotePort ?? 0);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > 64 * 1024) req.destroy(new Error('the answer to the proof is too long'));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), reached }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
  });
}

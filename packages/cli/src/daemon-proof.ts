import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AalisError } from '@aalis/core';
import { proofOf } from './daemon/token.js';

/** The server at a daemon's address could not prove it knows the token: the token was not sent. */
export class NotTheDaemonError extends AalisError<'not-the-daemon'> {
  override readonly name = 'NotTheDaemonError';
}

/**
 * Asks the server at `url` to prove it knows `token` (`GET /api/proof`, daemon/token.ts's
 * `proofOf`) before a request carries the token: a stopped daemon's url and token stay where a
 * client reads them, or in `AALIS_TOKEN`, and another local user may listen on its port by then.
 * Called before every request that sends the token (one round trip on the loopback). Throws
 * {@link NotTheDaemonError} when the proof is wrong or missing, a plain error when nothing answers.
 */
export async function proveDaemon(url: string, token: string): Promise<void> {
  const nonce = randomBytes(32).toString('hex');
  let response: Response;
  try {
    response = await fetch(new URL(`/api/proof?nonce=${nonce}`, url));
  } catch (error) {
    throw new Error(`the daemon at ${url} does not answer (${(error as Error).message}); start it with 'aalis serve'.`);
  }
  const body = (await response.json().catch(() => undefined)) as { proof?: unknown } | undefined;
  const expected = Buffer.from(proofOf(token, nonce), 'hex');
  const given = typeof body?.proof === 'string' && /^[0-9a-f]{64}$/.test(body.proof) ? Buffer.from(body.proof, 'hex') : undefined;
  if (given === undefined || !timingSafeEqual(given, expected)) {
    throw new NotTheDaemonError(
      'not-the-daemon',
      `the server at ${url} could not prove it is the daemon whose token this is (it answered ${response.status}${given === undefined ? ' without a proof' : ' with a wrong proof'}): the daemon may have stopped and something else listens on its port, or the token is another daemon's. The token was not sent.`,
      { fix: "start the daemon again ('aalis serve'), or give the right --url and AALIS_TOKEN" },
    );
  }
}

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A new API token: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares two secrets in constant time (over their digests, so lengths do not show). */
export function same(given: string, token: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** What a nonce of {@link proofOf} is: 32 to 128 lower-case hex digits. */
export const PROOF_NONCE = /^[0-9a-f]{32,128}$/;

/**
 * The daemon's answer to `GET /api/proof?nonce=…`: HMAC-SHA-256 keyed by its token over a label,
 * the client's nonce and the address the connection was made to (the daemon's own end: its
 * address and port), in hex. A client checks it before it sends the token (daemon-proof.ts):
 * whatever listens on a stopped daemon's port (another local user's server) cannot answer it, so
 * the token a client read from the data directory is never handed to it (found by an attack: the
 * console's tab and \`aalis chat\` sent it to a squatter). The address binds the proof to the
 * connection's end: a server that relayed the question to a daemon elsewhere (another port, another
 * address) holding the same token got a proof that held, and then the token (found by an attack).
 * The answer tells nothing of the token.
 */
export function proofOf(token: string, nonce: string, at: ProofAddress): string {
  return createHmac('sha256', token).update(`aalis-daemon-proof\0${nonce}\0${at.address}\0${at.port}`).digest('hex');
}

/** The daemon's end of a connection, as the proof names it. */
export interface ProofAddress {
  /** An IP address; an IPv4 one mapped into IPv6 (`::ffff:127.0.0.1`) is written as IPv4. */
  readonly address: string;
  readonly port: number;
}

/** An address as the proof writes it: IPv4 mapped into IPv6 as plain IPv4, IPv6 in lower case. */
export function proofAddressOf(address: string, port: number): ProofAddress {
  const plain = address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  return { address: plain, port };
}

/** The value of `Authorization: Bearer <value>`, if the request carries one. */
export function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/** Whether the request carries `Authorization: Bearer <token>`; compared in constant time. */
export function bearerMatches(req: IncomingMessage, token: string): boolean {
  const given = bearerOf(req);
  return given !== undefined && same(given, token);
}

/** Whether an address is on the loopback (127.0.0.0/8, ::1, or either mapped). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

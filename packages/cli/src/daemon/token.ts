import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A new API token: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The cookie the console sets so the pod's panel (which cannot send the header) is let in. */
export const TOKEN_COOKIE = 'aalis_token';

function same(given: string, token: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** Whether the request carries `Authorization: Bearer <token>`; compared in constant time. */
export function bearerMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] !== undefined && same(match[1], token);
}

/** Whether the request carries the console's cookie with the token. */
export function cookieMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return false;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === TOKEN_COOKIE && same(decodeURIComponent(value.join('=')), token)) return true;
  }
  return false;
}

/** Whether an address is on the loopback (127.0.0.0/8, ::1, or either mapped). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PAGE_CODE_LABEL } from '@aalis/core';
import { isLoopback, same } from './token.js';

/** How long a console address opens the console: long enough to read it and click it. */
export const CONSOLE_CODE_MS = 30 * 60 * 1000;
/** At most this many unclaimed codes live at once; the oldest goes first. */
const MAX_LIVE = 16;

/** What a code's id is (16 random bytes, base64url), as `POST /api/console/claim` takes it. */
export const CONSOLE_CODE_ID = /^[A-Za-z0-9_-]{22}$/;
/** What a whole code is in the console's address: `<id>.<key>` (the key: 32 random bytes, base64url). */
export const CONSOLE_CODE = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** A code as it is handed out, and when it stops opening the console. */
export interface ConsoleCode {
  readonly code: string;
  readonly expiresAt: number;
}

/** The daemon's answer to a claim: the token sealed with the code's key (AES-256-GCM, the tag after the ciphertext), base64url. */
export interface SealedToken {
  readonly iv: string;
  readonly sealed: string;
}

/** The additional data a sealed secret is bound to: core's {@link PAGE_CODE_LABEL} (the pages open with it too), a NUL and the code's id. */
export function sealLabel(id: string): Buffer {
  return Buffer.from(`${PAGE_CODE_LABEL}\0${id}`);
}

/**
 * One-time codes that open the console, so the daemon's token is never printed nor put in an
 * address. A browser keeps every address it opened (its history, a synced profile) and a daemon's
 * output is often kept too (a service's journal, a terminal's scrollback): the address printed
 * at start used to carry the token itself, alive as long as the daemon.
 *
 * A code is `<id>.<key>`, in the console address's fragment (which browsers never send). The page
 * sends the id alone to `POST /api/console/claim`; the daemon answers once, with its token sealed
 * under the key, and forgets the code. The key never leaves the page: whatever answers at the
 * address in the daemon's stead (another user's server on its port once it stopped) learns only
 * an id, and cannot make an answer the key opens; a server that relays the id to the daemon gets
 * a sealed token it cannot open. The page then checks the server's proof (token.ts) before it
 * sends the token anywhere, as it always did. The Isolation Pod's panel is opened the same way,
 * its code's secret a pod capability (pod-capability.ts) instead of the token. Kept in memory: a
 * restart ends them all.
 */
export class ConsoleCodes {
  readonly #live = new Map<string, { readonly key: Buffer; readonly secret: string; readonly expiresAt: number }>();

  constructor(
    private readonly token: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new code for `secret` (default the daemon's token; the pod's panel gets a pod capability), valid for {@link CONSOLE_CODE_MS} or until it is claimed. */
  issue(secret: string = this.token): ConsoleCode {
    this.#prune();
    while (this.#live.size >= MAX_LIVE) this.#live.delete(this.#live.keys().next().value as string);
    const id = randomBytes(16).toString('base64url');
    const key = randomBytes(32);
    const expiresAt = this.now() + CONSOLE_CODE_MS;
    this.#live.set(id, { key, secret, expiresAt });
    return { code: `${id}.${key.toString('base64url')}`, expiresAt };
  }

  /** The code's secret sealed under the key of the live code `id`, which is gone after this; undefined when there is none (claimed, expired, never issued). */
  claim(id: string): SealedToken | undefined {
    this.#prune();
    let found: string | undefined;
    // every live id compared, in constant time each: the answer's time tells nothing of them
    for (const live of this.#live.keys()) if (same(id, live)) found = live;
    if (found === undefined) return undefined;
    const { key, secret } = this.#live.get(found)!;
    this.#live.delete(found);
    return sealToken(secret, key, found);
  }

  #prune(): void {
    const now = this.now();
    for (const [id, { expiresAt }] of this.#live) if (expiresAt <= now) this.#live.delete(id);
  }
}

/** Seals `token` under `key` for the code `id` (AES-256-GCM, a new IV). */
export function sealToken(token: string, key: Buffer, id: string): SealedToken {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(sealLabel(id));
  const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { iv: iv.toString('base64url'), sealed: sealed.toString('base64url') };
}

/** Opens a claim's answer with the whole code (what the console's page does, in node: for clients and tests); throws when the key does not open it. */
export function openSealedToken(code: string, answer: SealedToken): string {
  const match = CONSOLE_CODE.exec(code);
  if (!match) throw new Error(`'${code.slice(0, 80)}' is not a console code (<id>.<key>)`);
  const [, id, key] = match as unknown as [string, string, string];
  const sealed = Buffer.from(answer.sealed, 'base64url');
  if (sealed.length < 17) throw new Error('the sealed token is too short');
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64url'), Buffer.from(answer.iv, 'base64url'));
  decipher.setAAD(sealLabel(id));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8');
}

/**
 * The console's origin for a daemon listening on `address`: always a loopback IP literal, never a
 * name. A name is resolved again by the browser, and `localhost` resolves to ::1 first in
 * Chromium: a daemon given `--host localhost` listened on 127.0.0.1 alone, and another local
 * user's server on [::1] at the same port was handed the whole address, code and key, and claimed
 * it at the daemon (found by an attack). A wildcard gets the loopback of its family; 0.0.0.0
 * itself is no secure context in a browser (no WebCrypto), so the page could not open the code.
 * Undefined when the daemon listens on an address that is not the loopback's: the console is
 * served on the loopback only.
 */
export function consoleOrigin(address: string, port: number): string | undefined {
  const plain = address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
  if (plain === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (plain === '::') return `http://[::1]:${port}`;
  if (!isLoopback(plain)) return undefined;
  return plain.includes(':') ? `http://[${plain}]:${port}` : `http://${plain}:${port}`;
}

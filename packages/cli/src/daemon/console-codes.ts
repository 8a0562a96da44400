import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PAGE_CODE_KINDS, PAGE_CODE_LABEL, type PageCodeKind } from '@aalis/core';
import { isLoopback, same } from './token.js';

/** How long a console address opens the console: long enough to read it and click it. */
export const CONSOLE_CODE_MS = 30 * 60 * 1000;
/** At most this many unclaimed codes of a kind live at once; the oldest goes first. */
const MAX_LIVE = 16;

/** What a code's id is (16 random bytes, base64url), as `POST /api/console/claim` takes it. */
export const CONSOLE_CODE_ID = /^[A-Za-z0-9_-]{22}$/;
/** What a whole code is in the console's address: `<id>.<key>` (the key: 32 random bytes, base64url). */
export const CONSOLE_CODE = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** A code as it is handed out, and when it stops opening its page. */
export interface ConsoleCode {
  readonly code: string;
  readonly expiresAt: number;
}

/** The daemon's answer to a claim: the secret sealed with the code's key (AES-256-GCM, the tag after the ciphertext), base64url. */
export interface SealedToken {
  readonly iv: string;
  readonly sealed: string;
}

/** What a claim found: the sealed secret (and whether the page may keep it), nothing live, or a live code of the other page (not spent). */
export type ClaimResult = { readonly kind: 'sealed'; readonly sealed: SealedToken; readonly keep: boolean } | { readonly kind: 'none' } | { readonly kind: 'other'; readonly is: PageCodeKind };

/** The additional data a sealed secret is bound to: core's {@link PAGE_CODE_LABEL} (the pages open with it too), the page it is for and the code's id, NUL-separated. */
export function sealLabel(kind: PageCodeKind, id: string): Buffer {
  return Buffer.from(`${PAGE_CODE_LABEL}\0${kind}\0${id}`);
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
 * keeps or sends the token, as it always did. The Isolation Pod's panel is opened the same way, its
 * code's secret a pod capability (pod-capability.ts). Each code is for one page ({@link
 * PAGE_CODE_KINDS}), in a table of its own and sealed for it: a console address opened at /pod
 * gave the panel the owner's token (found by an attack); now its claim there is refused unspent,
 * and many pod codes never push out a console code. Kept in memory: a restart ends them all.
 */
export class ConsoleCodes {
  readonly #live = new Map<PageCodeKind, Map<string, { readonly key: Buffer; readonly secret: string; readonly expiresAt: number }>>(PAGE_CODE_KINDS.map((k) => [k, new Map()]));

  /** `keepToken`: whether a page may keep the daemon's token in its tab's storage (not when AALIS_TOKEN fixed it: it outlives the daemon, and whatever serves the port next could read the tab's storage). */
  constructor(
    private readonly token: string,
    private readonly keepToken = true,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new code for the page `kind` and its `secret` (the console: the daemon's token; the pod's panel: a pod capability), valid for {@link CONSOLE_CODE_MS} or until it is claimed. */
  issue(kind: PageCodeKind, secret: string = this.token): ConsoleCode {
    const live = this.#prune(kind);
    while (live.size >= MAX_LIVE) live.delete(live.keys().next().value as string);
    const id = randomBytes(16).toString('base64url');
    const key = randomBytes(32);
    const expiresAt = this.now() + CONSOLE_CODE_MS;
    live.set(id, { key, secret, expiresAt });
    return { code: `${id}.${key.toString('base64url')}`, expiresAt };
  }

  /** Claims the live code `id` of the page `kind`: its secret sealed under its key, and the code is gone; a live code of another page is named and left live. */
  claim(kind: PageCodeKind, id: string): ClaimResult {
    let result: ClaimResult = { kind: 'none' };
    // every live id of every page compared, in constant time each: the answer's time tells nothing of them
    for (const page of PAGE_CODE_KINDS) {
      const live = this.#prune(page);
      for (const [liveId, entry] of live) {
        if (!same(id, liveId)) continue;
        if (page !== kind) {
          result = { kind: 'other', is: page };
          continue;
        }
        live.delete(liveId);
        result = { kind: 'sealed', sealed: sealSecret(entry.secret, entry.key, kind, liveId), keep: kind !== 'console' || this.keepToken };
      }
    }
    return result;
  }

  #prune(kind: PageCodeKind): Map<string, { readonly key: Buffer; readonly secret: string; readonly expiresAt: number }> {
    const live = this.#live.get(kind)!;
    const now = this.now();
    for (const [id, { expiresAt }] of live) if (expiresAt <= now) live.delete(id);
    return live;
  }
}

/** Seals `secret` under `key` for the code `id` of the page `kind` (AES-256-GCM, a new IV). */
export function sealSecret(secret: string, key: Buffer, kind: PageCodeKind, id: string): SealedToken {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(sealLabel(kind, id));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { iv: iv.toString('base64url'), sealed: sealed.toString('base64url') };
}

/** Opens a claim's answer with the whole code for the page `kind` (what the pages do, in node: for clients and tests); throws when the key does not open it. */
export function openSealedToken(code: string, answer: SealedToken, kind: PageCodeKind = 'console'): string {
  const match = CONSOLE_CODE.exec(code);
  if (!match) throw new Error(`'${code.slice(0, 80)}' is not a console code (<id>.<key>)`);
  const [, id, key] = match as unknown as [string, string, string];
  const sealed = Buffer.from(answer.sealed, 'base64url');
  if (sealed.length < 17) throw new Error('the sealed token is too short');
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'base64url'), Buffer.from(answer.iv, 'base64url'));
  decipher.setAAD(sealLabel(kind, id));
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

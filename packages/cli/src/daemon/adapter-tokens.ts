import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type DurableStore, UNAUTHENTICATED_AUTHOR } from '@aalis/core';
import { z } from 'zod';
import { ApiError } from './http.js';
import { newToken } from './token.js';

/*
 * Adapter tokens. The daemon's own token opens its whole API (the console, the audit log, the
 * pod, every conversation), and a chat bridge that held it vouched for anyone on any platform: a
 * Telegram bridge could name the console's identity, or join `aalis chat`'s conversation (found by
 * an attack). An adapter gets a token of its own instead, bound to one platform: with it the
 * daemon takes turns and answers only for that platform's identities and conversations
 * (api-client.ts). The daemon keeps a digest of each token, never the token: whoever reads the data
 * directory learns no adapter's credential from it.
 */

/** The document, in `<data>/daemon/`. */
export const ADAPTERS_DOCUMENT = 'adapters';

/** An adapter's name: what `aalis adapter` and the daemon's answers call it. */
export const AdapterNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { message: 'is 1 to 63 characters: lower-case letters, digits, "-" and "_", starting with a letter or digit' });

/**
 * The platform an adapter speaks for: an identity's `platform` as the config's owners name it, in
 * lower case without spaces (' telegram' or 'Telegram' would match no identity, and nothing would
 * say so: found by an attack), never the daemon's mark for an unauthenticated speaker.
 */
export const AdapterPlatformSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, { message: 'is 1 to 64 characters: lower-case letters, digits, ".", "-" and "_", as the owners of aalis.config.json name it' })
  .refine((p) => p !== UNAUTHENTICATED_AUTHOR.platform, { message: `'${UNAUTHENTICATED_AUTHOR.platform}' is the daemon's mark for a speaker nobody authenticated, not a platform` });

const DIGEST = /^[0-9a-f]{64}$/;

const AdapterEntrySchema = z
  .object({
    name: AdapterNameSchema,
    platform: AdapterPlatformSchema,
    /** SHA-256 of the token, hex: the token has 256 random bits, so no stretching is needed. */
    digest: z.string().regex(DIGEST),
    created: z.string(),
  })
  .strict();

const AdaptersDocumentSchema = z.object({ v: z.literal(1), adapters: z.array(AdapterEntrySchema) }).strict();

/** An adapter as the daemon lists it (never its token or digest). */
export interface AdapterView {
  readonly name: string;
  readonly platform: string;
  readonly created: string;
}

/** A client that presented an adapter's token. */
export interface AdapterClient {
  readonly kind: 'adapter';
  readonly name: string;
  readonly platform: string;
}

function digestOf(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** The adapters a daemon knows, kept in its data directory; changed only by the owner (POST /api/adapters). */
export class AdapterTokens {
  #entries: z.infer<typeof AdapterEntrySchema>[];
  /** Keys the proofs of names that are no adapter's, so a proof does not tell which names are. */
  readonly #unknownKey = randomBytes(32);
  /**
   * The change under way. Each change reads the list, waits for the disk, then sets the list: two
   * at once each built on the list before the other, so a remove answered 200 was undone by an add
   * (the removed token kept working, across restarts) and a replaced token stayed valid while its
   * new one was refused (found by an attack). One at a time, every answered change holds.
   */
  #changing: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: DurableStore,
    entries: z.infer<typeof AdapterEntrySchema>[],
  ) {
    this.#entries = entries;
  }

  /** Reads the document; one that does not parse stops the daemon's start (fail closed: no adapter is let in on a guess). */
  static async open(store: DurableStore): Promise<AdapterTokens> {
    let doc: z.infer<typeof AdaptersDocumentSchema> | undefined;
    try {
      doc = await store.read(ADAPTERS_DOCUMENT, AdaptersDocumentSchema);
    } catch (error) {
      throw new ApiError('unavailable', `the adapters' tokens cannot be read (${(error as Error).message}), so no adapter could be let in.`, {
        fix: `remove ${store.dir}/${ADAPTERS_DOCUMENT}.json and add the adapters again with 'aalis adapter add' (each gets a new token)`,
      });
    }
    return new AdapterTokens(store, doc?.adapters ?? []);
  }

  /** The adapter whose token this is, compared in constant time against every one. */
  match(bearer: string): AdapterClient | undefined {
    const given = digestOf(bearer);
    let found: AdapterClient | undefined;
    for (const entry of this.#entries) {
      if (timingSafeEqual(given, Buffer.from(entry.digest, 'hex')) && found === undefined) found = { kind: 'adapter', name: entry.name, platform: entry.platform };
    }
    return found;
  }

  /**
   * The key of an adapter's proof (token.ts `proofOf`): its token's digest, which the client
   * computes from its token. A name that is no adapter's gets a key nobody knows, so the answer
   * looks the same and tells no one which adapters exist.
   */
  proofKeyOf(name: string): string {
    return this.#entries.find((e) => e.name === name)?.digest ?? createHmac('sha256', this.#unknownKey).update(name).digest('hex');
  }

  /** Every adapter, by name. */
  list(): AdapterView[] {
    return this.#entries.map(({ name, platform, created }) => ({ name, platform, created })).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * A new adapter (or, with `replace`, a new token for one: its old token stops working), saved
   * before its token is returned. The token is shown once: the daemon keeps only its digest.
   */
  add(name: string, platform: string, replace = false): Promise<{ token: string; adapter: AdapterView }> {
    return this.#serial(() => this.#add(name, platform, replace));
  }

  async #add(name: string, platform: string, replace: boolean): Promise<{ token: string; adapter: AdapterView }> {
    const existing = this.#entries.find((e) => e.name === name);
    if (existing && !replace) {
      throw new ApiError('conflict', `an adapter named '${name}' exists already (platform ${existing.platform}); nothing was changed.`, { fix: `give it another name, or replace its token with 'aalis adapter add ${name} --platform ${platform} --replace'` });
    }
    const token = newToken();
    const entry = { name, platform, digest: digestOf(token).toString('hex'), created: new Date().toISOString() };
    const next = [...this.#entries.filter((e) => e.name !== name), entry];
    await this.store.write(ADAPTERS_DOCUMENT, { v: 1, adapters: next });
    this.#entries = next;
    return { token, adapter: { name, platform, created: entry.created } };
  }

  /** Removes an adapter: its token stops working at once. Whether there was one. */
  remove(name: string): Promise<boolean> {
    return this.#serial(() => this.#remove(name));
  }

  async #remove(name: string): Promise<boolean> {
    const next = this.#entries.filter((e) => e.name !== name);
    if (next.length === this.#entries.length) return false;
    await this.store.write(ADAPTERS_DOCUMENT, { v: 1, adapters: next });
    this.#entries = next;
    return true;
  }

  /** Runs `change` once every change asked before it has ended, whether that one held or failed. */
  #serial<T>(change: () => Promise<T>): Promise<T> {
    const next = this.#changing.then(change, change);
    this.#changing = next.catch(() => {});
    return next;
  }
}

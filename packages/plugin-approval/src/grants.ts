import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ApprovalSubject, DurableStore, Identity } from '@aalis/core';
import { describeError, IdentitySchema } from '@aalis/core';
import { z } from 'zod';
import { ApprovalSubjectSchema, type GrantScope, sameScope } from './subject.js';

/** Name of the grants document in the plugin's store. */
export const GRANTS_DOCUMENT = 'grants';

/** A remembered approval: answers later asks with the same scope in the same session. */
export interface Grant {
  readonly id: string;
  /** The (root) session it belongs to. */
  readonly session: string;
  readonly scope: GrantScope;
  /** The subject of the ask that created it, as it was asked. */
  readonly subject: ApprovalSubject;
  readonly grantedBy: Identity;
  /** ISO time. */
  readonly grantedAt: string;
  /** The approval whose reply created it. */
  readonly approvalId: string;
}

/** zod schema of a {@link GrantScope} as stored. */
export const GrantScopeSchema = z.object({
  kind: z.enum(['write-path', 'host-exec', 'network', 'workflow', 'tool', 'plan']),
  rule: z.enum(['tier', 'boundary', 'landing', 'high-risk', 'plan']),
  target: z.string(),
});

const GrantSchema = z.object({
  id: z.string(),
  session: z.string(),
  scope: GrantScopeSchema,
  subject: ApprovalSubjectSchema,
  grantedBy: IdentitySchema,
  grantedAt: z.string(),
  approvalId: z.string(),
});
const GrantsDocumentSchema = z.object({ v: z.literal(1), grants: z.array(GrantSchema) });

/**
 * The remembered grants, kept in one document replaced atomically on every change, so a
 * revocation that returned is a revocation on disk.
 */
export class GrantBook {
  readonly #grants = new Map<string, Grant>();

  private constructor(private readonly store: DurableStore) {}

  /** Loads the grants the store holds. */
  static async open(store: DurableStore): Promise<GrantBook> {
    const book = new GrantBook(store);
    let stored: z.infer<typeof GrantsDocumentSchema> | undefined;
    try {
      stored = await store.read(GRANTS_DOCUMENT, GrantsDocumentSchema);
    } catch (error) {
      throw new Error(
        `the remembered grants cannot be read (${describeError(error)}). Move ${join(store.dir, `${GRANTS_DOCUMENT}.json`)} aside and start again: the daemon then starts without remembered grants (what they allowed is asked again), and the audit log keeps who granted what.`,
      );
    }
    for (const grant of stored?.grants ?? []) book.#grants.set(grant.id, grant);
    return book;
  }

  /** The grant of this session covering this scope, if any. */
  find(session: string, scope: GrantScope): Grant | undefined {
    for (const grant of this.#grants.values()) {
      if (grant.session === session && sameScope(grant.scope, scope)) return grant;
    }
    return undefined;
  }

  /** The grant with this id, if it is in force. */
  get(id: string): Grant | undefined {
    return this.#grants.get(id);
  }

  /** A session's grants, or every session's without one; oldest first. */
  list(session?: string): readonly Grant[] {
    const all = [...this.#grants.values()];
    return session === undefined ? all : all.filter((g) => g.session === session);
  }

  /** A fresh grant id: chosen before the grant exists, so its audit line can name it first. */
  static newId(): string {
    return `grant-${randomUUID()}`;
  }

  /**
   * Adds a grant under the id its audit line already names, and persists it; an existing grant
   * for the same scope is kept and returned.
   */
  async add(entry: Omit<Grant, 'grantedAt'>, now: number): Promise<Grant> {
    const existing = this.find(entry.session, entry.scope);
    if (existing) return existing;
    const grant: Grant = Object.freeze({ ...entry, grantedAt: new Date(now).toISOString() });
    this.#grants.set(grant.id, grant);
    try {
      await this.#persist();
    } catch (error) {
      this.#grants.delete(grant.id);
      throw error;
    }
    return grant;
  }

  /** Removes a grant; it stops answering at once, and the removal is on disk when this resolves. */
  async remove(id: string): Promise<Grant | undefined> {
    const grant = this.#grants.get(id);
    if (!grant) return undefined;
    this.#grants.delete(id);
    await this.#persist();
    return grant;
  }

  /** Keeps only the grants `keep` accepts; what it drops is gone on disk when this resolves. */
  async retain(keep: (grant: Grant) => boolean): Promise<Grant[]> {
    const dropped = [...this.#grants.values()].filter((g) => !keep(g));
    if (dropped.length === 0) return [];
    for (const grant of dropped) this.#grants.delete(grant.id);
    await this.#persist();
    return dropped;
  }

  #persist(): Promise<void> {
    return this.store.write(GRANTS_DOCUMENT, { v: 1, grants: [...this.#grants.values()] });
  }
}

import { DurableStore } from '@aalis/core';
import { z } from 'zod';

const EntrySchema = z.object({
  id: z.string(),
  platform: z.string(),
  firstSeen: z.string(),
  lastSeen: z.string(),
});
const DocumentSchema = z.object({ v: z.literal(1), sessions: z.array(EntrySchema) });
/** A conversation the daemon has seen a turn or a settings change for. */
export type KnownSession = z.infer<typeof EntrySchema>;

/**
 * The (root) conversations the daemon has seen, so the console can list them: the kernel's
 * sessions service opens conversations by id but does not enumerate them. Kept in
 * `<data>/daemon/sessions.json`, replaced atomically.
 */
export class SessionIndex {
  readonly #sessions = new Map<string, KnownSession>();
  #writing: Promise<void> = Promise.resolve();

  private constructor(private readonly store: DurableStore) {}

  /** Opens the index under `dir`. */
  static async open(dir: string): Promise<SessionIndex> {
    const store = await DurableStore.open(dir);
    const index = new SessionIndex(store);
    for (const entry of (await store.read('sessions', DocumentSchema))?.sessions ?? []) index.#sessions.set(entry.id, entry);
    return index;
  }

  /** Notes that a conversation was used now. */
  async seen(id: string, platform: string): Promise<void> {
    const now = new Date().toISOString();
    const known = this.#sessions.get(id);
    this.#sessions.set(id, known ? { ...known, lastSeen: now } : { id, platform, firstSeen: now, lastSeen: now });
    const snapshot = { v: 1 as const, sessions: [...this.#sessions.values()] };
    this.#writing = this.#writing.catch(() => {}).then(() => this.store.write('sessions', snapshot));
    await this.#writing;
  }

  /** Whether the daemon has seen this conversation. */
  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  /** Every known conversation, most recently used first. */
  list(): KnownSession[] {
    return [...this.#sessions.values()].sort((a, b) => b.lastSeen.localeCompare(a.lastSeen));
  }
}

import { join } from 'node:path';
import { DurableStore, writeFileAtomic } from '@aalis/core';
import { z } from 'zod';

const EntrySchema = z.object({
  id: z.string(),
  platform: z.string(),
  firstSeen: z.string(),
  lastSeen: z.string(),
});
const DocumentSchema = z.object({ v: z.literal(1), sessions: z.array(EntrySchema) });
/** A journal line: one entry, or the entries of the calls that arrived while the line before was being written. */
const LineSchema = z.union([EntrySchema, z.object({ seen: z.array(EntrySchema).min(1) })]);
/** A conversation the daemon has seen a turn or a settings change for. */
export type KnownSession = z.infer<typeof EntrySchema>;

/** A conversation noted for a call ({@link SessionIndex.note}). */
export interface NotedConversation {
  /** The index did not know it before this call. */
  readonly isNew: boolean;
  /** Resolves once its line is on disk; rejects when the write failed. */
  readonly written: Promise<void>;
  /** The same write settled: `undefined`, or what it failed with. Never rejects. */
  readonly settled: Promise<unknown>;
}

const SNAPSHOT = 'sessions';
const JOURNAL = 'sessions-journal';
/** Entries serialised per turn of the event loop when the snapshot is written (a few ms each). */
const SNAPSHOT_SLICE = 1000;

/** Options for {@link SessionIndex.open}. */
export interface SessionIndexOptions {
  /** Journal lines before it is folded into the snapshot: at least this many, and at least the number of conversations (default 1000). */
  readonly compactAfter?: number;
}

/**
 * The (root) conversations the daemon has seen, so the console can list them: the kernel's
 * sessions service opens conversations by id but does not enumerate them.
 *
 * A tool call costs one short fsync'd line in `<data>/daemon/sessions-journal.jsonl`, whatever
 * the number of conversations; `sessions.json` (replaced atomically) is rewritten only when the
 * journal has grown past the number of conversations, so its cost is spread over that many calls.
 * A line is whole entries, so replaying the journal over the snapshot is the same after a kill at
 * any point, and a `seen` that returned is on disk. Calls that arrive while a line is being
 * written share the next line and its one fsync (group commit): concurrent calls do not queue
 * one fsync each.
 */
export class SessionIndex {
  readonly #sessions = new Map<string, KnownSession>();
  #writing: Promise<void> = Promise.resolve();
  #journalLines = 0;
  #compacting = false;
  /** Entries noted but not yet written, and the write that will take them (not started yet). */
  readonly #pending = new Map<string, KnownSession>();
  #flush: Promise<void> | undefined;

  private constructor(
    private readonly store: DurableStore,
    private readonly compactAfter: number,
  ) {}

  /** Opens the index under `dir`. */
  static async open(dir: string, options: SessionIndexOptions = {}): Promise<SessionIndex> {
    const store = await DurableStore.open(dir);
    const index = new SessionIndex(store, options.compactAfter ?? 1000);
    let snapshot: z.infer<typeof DocumentSchema> | undefined;
    try {
      snapshot = await store.read(SNAPSHOT, DocumentSchema);
    } catch (error) {
      throw new Error(
        `the conversation index cannot be read (${error instanceof Error ? error.message : String(error)}). Move ${join(store.dir, `${SNAPSHOT}.json`)} aside and start again: the conversations themselves are kept apart from it, and each is listed again (as its own platform's) when it is next used.`,
      );
    }
    for (const entry of snapshot?.sessions ?? []) index.#sessions.set(entry.id, entry);
    // A torn last line is a `seen` that never returned; it is skipped (and sealed by the next append).
    const journal = await store.readLog(JOURNAL, LineSchema);
    for (const line of journal.records) for (const entry of 'seen' in line ? line.seen : [line]) index.#sessions.set(entry.id, entry);
    index.#journalLines = journal.records.length + journal.invalid + journal.torn;
    return index;
  }

  /** Notes that a conversation was used now; resolves when that is on disk. */
  async seen(id: string, platform: string): Promise<void> {
    const now = new Date().toISOString();
    const known = this.#sessions.get(id);
    const entry = known ? { ...known, lastSeen: now } : { id, platform, firstSeen: now, lastSeen: now };
    this.#sessions.set(id, entry);
    this.#pending.set(id, entry);
    // Taken when the write starts, not now: every call noted until then shares its line.
    this.#flush ??= this.#serial(() => {
      this.#flush = undefined;
      const entries = [...this.#pending.values()];
      this.#pending.clear();
      return this.store.append(JOURNAL, entries.length === 1 ? entries[0] : { seen: entries });
    });
    const append = this.#flush;
    if (++this.#journalLines >= Math.max(this.compactAfter, this.#sessions.size) && !this.#compacting) {
      this.#compacting = true;
      // Not awaited by this call: its line is what it needs; the next appends wait behind it.
      void this.#serial(() => this.#compact().finally(() => (this.#compacting = false))).catch((error) => process.emitWarning(`the conversation index could not be compacted (${String(error)}); it keeps its journal and tries again later.`));
    }
    await append;
  }

  /**
   * {@link seen}, for a call that decides what waits for the line: whether the conversation is new
   * to the index, the write, and the same write settled (`undefined`, or what it failed with), on
   * which a caller that does not await `written` waits without an unhandled rejection.
   */
  note(id: string, platform: string): NotedConversation {
    const isNew = !this.#sessions.has(id);
    const written = this.seen(id, platform);
    const settled = written.then(
      () => undefined,
      (error: unknown) => error ?? new Error('the write failed without a reason'),
    );
    return { isNew, written, settled };
  }

  /** The platform of the conversation's first turn, or `undefined` for one the daemon has never seen (adapters act only in their platform's: api-client.ts). */
  platformOf(id: string): string | undefined {
    return this.#sessions.get(id)?.platform;
  }

  /** Whether the daemon has seen this conversation. */
  has(id: string): boolean {
    return this.#sessions.has(id);
  }

  /** Every known conversation, most recently used first. */
  list(): KnownSession[] {
    return [...this.#sessions.values()].sort((a, b) => b.lastSeen.localeCompare(a.lastSeen));
  }

  /**
   * Writes the snapshot, then empties the journal: a kill between the two replays lines already in
   * it. The snapshot's text is made a slice of entries at a time, back on the event loop between
   * slices: 100,000 conversations in one `JSON.stringify` held the daemon's thread for 170-650 ms.
   */
  async #compact(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    // each slice encoded at its turn: the one copy at the end is a memcpy, not a 15 MB string's encoding
    const parts: Buffer[] = [Buffer.from('{"v":1,"sessions":[\n')];
    for (let at = 0; at < sessions.length; at += SNAPSHOT_SLICE) {
      if (at > 0) await new Promise((resolve) => setImmediate(resolve));
      const slice = sessions.slice(at, at + SNAPSHOT_SLICE).map((entry) => JSON.stringify(entry));
      parts.push(Buffer.from(`${at > 0 ? ',\n' : ''}${slice.join(',\n')}`));
    }
    parts.push(Buffer.from('\n]}\n'));
    await writeFileAtomic(join(this.store.dir, `${SNAPSHOT}.json`), Buffer.concat(parts), { mode: 0o600 });
    await writeFileAtomic(join(this.store.dir, `${JOURNAL}.jsonl`), '', { mode: 0o600 });
    this.#journalLines = 0;
  }

  #serial(task: () => Promise<void>): Promise<void> {
    const next = this.#writing.catch(() => {}).then(task);
    this.#writing = next.catch(() => {});
    return next;
  }
}

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

/** What {@link SessionIndex.page} is asked for. */
export interface SessionPageQuery {
  /** At most this many entries. */
  readonly limit: number;
  /** Only entries used before this one ({@link SessionPage.next} of the page before); from the most recent without it. */
  readonly before?: SessionCursor;
  /** The platform whose conversations alone are listed (an adapter's); every platform's without it. */
  readonly platform?: string;
}

/** Where a page ended: the last entry's use and id (entries are ordered by both). */
export interface SessionCursor {
  readonly lastSeen: string;
  readonly id: string;
}

/** A page of conversations, most recently used first. */
export interface SessionPage {
  readonly sessions: KnownSession[];
  /** How many conversations the query's platform (or all) has in all. */
  readonly total: number;
  /** Where the next page starts, when there are more. */
  readonly next?: SessionCursor;
}

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
  /**
   * The same entries ordered by (lastSeen, id), least recent first: a page is a binary search and a
   * walk, where sorting 100,000 entries at each listing held the daemon's thread for a second.
   */
  readonly #ordered: KnownSession[] = [];
  readonly #perPlatform = new Map<string, number>();
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
    index.#ordered.push(...index.#sessions.values());
    index.#ordered.sort(byUse);
    for (const entry of index.#ordered) index.#count(entry.platform, 1);
    return index;
  }

  /** Notes that a conversation was used now; resolves when that is on disk. */
  async seen(id: string, platform: string): Promise<void> {
    const now = new Date().toISOString();
    const known = this.#sessions.get(id);
    const entry = known ? { ...known, lastSeen: now } : { id, platform, firstSeen: now, lastSeen: now };
    if (known) this.#ordered.splice(this.#position(known), 1);
    else this.#count(platform, 1);
    this.#ordered.splice(this.#position(entry), 0, entry);
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
    return this.#ordered.slice().reverse();
  }

  /** A page of the known conversations, most recently used first: its cost is the page's, not the index's. */
  page(query: SessionPageQuery): SessionPage {
    const sessions: KnownSession[] = [];
    let at = (query.before !== undefined ? this.#position(query.before) : this.#ordered.length) - 1;
    for (; at >= 0 && sessions.length < query.limit; at--) {
      const entry = this.#ordered[at]!;
      if (query.platform === undefined || entry.platform === query.platform) sessions.push(entry);
    }
    const total = query.platform === undefined ? this.#ordered.length : (this.#perPlatform.get(query.platform) ?? 0);
    // more only when an entry of the query's is left below where the walk stopped
    let more = false;
    for (; at >= 0 && !more; at--) more = query.platform === undefined || this.#ordered[at]!.platform === query.platform;
    const last = sessions.at(-1);
    return { sessions, total, ...(more && last !== undefined ? { next: { lastSeen: last.lastSeen, id: last.id } } : {}) };
  }

  /** Where `key` is, or would be, in {@link #ordered}: the first entry not before it. */
  #position(key: SessionCursor): number {
    let [low, high] = [0, this.#ordered.length];
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (byUse(this.#ordered[mid]!, key) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  #count(platform: string, by: number): void {
    this.#perPlatform.set(platform, (this.#perPlatform.get(platform) ?? 0) + by);
  }

  /**
   * Writes the snapshot, then empties the journal: a kill between the two replays lines already in
   * it. The snapshot's text is made a slice of entries at a time, back on the event loop between
   * slices: 100,000 conversations in one `JSON.stringify` held the daemon's thread for 170-650 ms.
   */
  async #compact(): Promise<void> {
    const sessions = this.#ordered.slice();
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

/** Orders by use, then id: ISO times compare as text (no locale: `localeCompare` cost a second per 100,000). */
function byUse(a: SessionCursor, b: SessionCursor): number {
  if (a.lastSeen !== b.lastSeen) return a.lastSeen < b.lastSeen ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type ChatMessage, ChatMessageSchema, type Conversation, fingerprintOf, type ModelContext, ModelContextSchema } from './conversation.js';
import { describeError } from './aalis-error.js';
import { SessionError } from './session-error.js';
import { defineService } from './service.js';
import {
  DEFAULT_SETTINGS,
  resolveSettings,
  type SessionSettings,
  SessionSettingsSchema,
  type SettingsChange,
  SettingsChangeSchema,
  type SettingsResolution,
} from './settings.js';
import type { DurableStore } from './store.js';
import { escapeInvisible, idProblem, shownText } from './well-formed.js';

/** Payload of `session/settings-changed`. */
export interface SettingsChangedEvent {
  readonly sessionId: string;
  readonly previous: SessionSettings;
  readonly next: SessionSettings;
}

declare module './events.js' {
  interface KernelEvents {
    'session/settings-changed': (event: SettingsChangedEvent) => void;
  }
}

const SessionRecordSchema = z.object({
  id: z.string(),
  rootId: z.string().optional(),
  /** Whose last used settings this conversation started from, and updates when they change. */
  scope: z.string().optional(),
  settings: SessionSettingsSchema,
  history: z.array(ChatMessageSchema),
  context: ModelContextSchema,
});
type SessionRecord = z.infer<typeof SessionRecordSchema>;

const LastUsedSchema = z.record(z.string(), SessionSettingsSchema);

/**
 * The most a conversation's stored record holds (its history and model context, as JSON) before a
 * person's next message archives its oldest part. Every message rewrote the whole record on the
 * daemon's thread, so a conversation of a hundred 1 MB messages stalled every client for seconds
 * at each new one (found by an attack, h105). Past it, the model context holds a megabyte or less (some 250,000 tokens), more than most models read.
 */
export const CONVERSATION_MAX_BYTES = 2 * 1024 * 1024;

/**
 * The most conversations held in memory when they persist, besides those calls under way hold:
 * past it, the least recently used are dropped (their files are whole; read again when next used). Every
 * conversation the daemon had touched stayed in memory for its life, and a listing of them all
 * read each one in (found reading h105's report).
 */
export const RESIDENT_CONVERSATIONS = 256;

/** One cut of a conversation's oldest messages, a line of its archive (`<record>-archive.jsonl` beside its record), oldest first. */
export interface ArchivedMessages {
  readonly archived: string;
  readonly messages: readonly ChatMessage[];
}

/** Conversations, their history and model context, and their settings; the kernel owns them all. */
export class Sessions {
  readonly #records = new Map<string, SessionRecord>();
  /** Each record's stored size (JSON characters), kept as it grows: measured once when read. */
  readonly #bytes = new Map<string, number>();
  /** Conversations whose oldest messages are being archived now. */
  readonly #archiving = new Set<string>();
  /** How many model-context messages each conversation has had archived since the daemon started (each snapshot's `contextArchived`). */
  readonly #contextCut = new Map<string, number>();
  /** Reads of the store under way, per id (see #loaded). */
  readonly #loading = new Map<string, Promise<SessionRecord | undefined>>();
  /** Last used settings per scope (a person); a scope never used starts from the defaults. */
  readonly #lastUsed = new Map<string, SessionSettings>();
  /**
   * Each conversation's root and settings, kept when its record is dropped: its settings are read
   * without its history. A listing read every listed conversation's whole record again (600 of
   * 200 KB: 1.9 s, the daemon held; found by an attack, h107). Small (no messages), one per
   * conversation used since the start, as the daemon's conversation index is.
   */
  readonly #heads = new Map<string, { readonly rootId: string | undefined; settings: SessionSettings }>();
  /** How many calls under way hold each conversation: only one no call holds is dropped from memory. */
  readonly #held = new Map<string, number>();

  /**
   * @param store where sessions persist (optional: in memory when absent)
   * @param onChange called after every settings change (the plugin forwards it as an event)
   */
  constructor(
    private readonly store?: DurableStore,
    private readonly onChange: (event: SettingsChangedEvent) => void = () => {},
    private readonly maxBytes: number = CONVERSATION_MAX_BYTES,
    private readonly resident: number = RESIDENT_CONVERSATIONS,
  ) {}

  /** How many conversations are held in memory now (the bound, and those calls under way hold). */
  get residentCount(): number {
    return this.#records.size;
  }

  /** Loads what the store holds: the last used settings. Sessions load on first use. */
  async load(): Promise<void> {
    const last = await this.store?.read('settings-last-used', LastUsedSchema);
    for (const [scope, settings] of Object.entries(last ?? {})) this.#lastUsed.set(scope, settings);
  }

  /**
   * Opens a conversation, creating it with the last used settings of `scope` (the person who
   * starts it, e.g. `qq:12345`), so one person's choice never becomes another's starting point.
   * A child shares its root's settings.
   */
  async open(id: string, options: { rootId?: string; scope?: string } = {}): Promise<Conversation> {
    return this.#use(async (held) => {
      // The root is opened first, in the same scope: a child opened before its root must not leave
      // the root to be created later from nobody's (the shared) last used settings.
      await this.#claimedRoot(held, id, options.rootId, options.scope);
      const record = await this.#record(held, id, options.rootId, options.scope);
      rootChecked(record.id, (await this.#top(held, record)).id, options.rootId);
      return view(record);
    });
  }

  /**
   * The root of a conversation as the kernel holds it (itself for a root; created as
   * {@link Sessions.open} would, in `scope`). `claimed`, a root a turn names, must be that root: a turn that
   * names another conversation's root is refused ({@link SessionError} `root-mismatch`), since
   * what is judged per root (the settings a credential reads, the session temp) would otherwise be
   * the other conversation's (found by an attack: a call naming a stricter conversation's root
   * replaced the settings that conversation's running command was judged by).
   */
  async rootOf(id: string, options: { claimed?: string; scope?: string } = {}): Promise<string> {
    return this.#use(async (held) => {
      await this.#claimedRoot(held, id, options.claimed, options.scope);
      const record = await this.#record(held, id, options.claimed, options.scope);
      return rootChecked(record.id, (await this.#top(held, record)).id, options.claimed);
    });
  }

  /** Whether a conversation exists (in memory or in the store), without creating it. */
  async has(id: string): Promise<boolean> {
    return (await this.peek(id)) !== undefined;
  }

  /** The settings that apply to a conversation (created as {@link Sessions.open} would): a child session takes its root's. */
  async settings(id: string, options: { scope?: string } = {}): Promise<SessionSettings> {
    const known = this.#headSettings(id);
    if (known !== undefined) return known;
    return this.#use(async (held) => {
      return (await this.#top(held, await this.#record(held, id, undefined, options.scope))).settings;
    });
  }

  /** The settings a new conversation of `scope` would start with. */
  lastUsed(scope = ''): SessionSettings {
    return this.#lastUsed.get(scope) ?? DEFAULT_SETTINGS;
  }

  /** Every scope's last used settings (`''` is the unscoped one of a single-person kernel). */
  lastUsedByScope(): Record<string, SessionSettings> {
    return Object.fromEntries(this.#lastUsed);
  }

  /**
   * Applies a change through the cross-axis resolver; a refused change leaves everything as it was.
   * The new settings become the last used of `options.by` (the scope of the person who made the
   * change, `platform:userId`), else of the person who started the conversation: an owner who
   * raises somebody else's conversation raises nobody's next one but their own.
   */
  async change(id: string, change: SettingsChange, options: { readonly by?: string } = {}): Promise<SettingsResolution> {
    return this.#use(async (held) => {
      const parsed = SettingsChangeSchema.safeParse(change);
      if (!parsed.success) {
        throw new TypeError(`settings change refused: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(change)'}: ${i.message}`).join('; ')}`);
      }
      const record = await this.#top(held, await this.#record(held, id));
      const resolution = resolveSettings(record.settings, parsed.data);
      if (!resolution.ok) return resolution;
      const previous = record.settings;
      record.settings = resolution.settings;
      this.#head(record);
      this.#lastUsed.set(options.by ?? record.scope ?? '', resolution.settings);
      await this.#persist(record);
      await this.store?.write('settings-last-used', Object.fromEntries(this.#lastUsed));
      this.onChange({ sessionId: record.id, previous, next: resolution.settings });
      return resolution;
    });
  }

  /**
   * Appends to a conversation's history and to its model context (what the model is shown), in
   * one write. `historyOnly`: a note for people the model is not shown (a failed turn's error).
   */
  async append(id: string, message: ChatMessage, options: { historyOnly?: boolean } = {}): Promise<void> {
    return this.#use(async (held) => {
      const record = await this.#record(held, id);
      const parsed = ChatMessageSchema.parse(message);
      const size = JSON.stringify(parsed).length;
      let bytes = this.#bytes.get(record.id) ?? JSON.stringify(record).length;
      record.history.push(parsed);
      bytes += size + 1;
      if (options.historyOnly !== true) {
        record.context.messages.push(structuredClone(parsed));
        bytes += size + 1;
      }
      // a person's message starts a turn: the record is cut there, never mid-turn (the agent reads
      // the context by position while its turn runs)
      if (parsed.role === 'user' && bytes > this.maxBytes && !this.#archiving.has(record.id)) bytes = await this.#archiveOldest(record);
      this.#bytes.set(record.id, bytes);
      await this.#persist(record);
    });
  }

  /**
   * Moves the oldest messages of an over-full record to its archive (appended, never rewritten),
   * until the history and the model context each hold at most a quarter of the bound; the context
   * then starts at a person's message (a tool result without its call is no message a model takes),
   * and always keeps the last one. The archive is written first: a crash before the record is
   * leaves those messages in both, never in neither. Returns the record's new size.
   */
  async #archiveOldest(record: SessionRecord): Promise<number> {
    // one cut at a time per conversation; appends meanwhile only add at the end, so the oldest
    // `historyCut` messages are still the ones written to the archive when they are taken away
    this.#archiving.add(record.id);
    try {
      const keep = this.maxBytes / 4;
      const historyCut = cutBefore(record.history, keep, () => true);
      if (historyCut > 0) await this.store?.append(`${fileOf(record.id)}-archive`, { archived: new Date().toISOString(), messages: record.history.slice(0, historyCut) } satisfies ArchivedMessages);
      record.history.splice(0, historyCut);
      const contextCut = cutBefore(record.context.messages, keep, (m) => m.role === 'user');
      record.context.messages.splice(0, contextCut);
      this.#contextCut.set(record.id, (this.#contextCut.get(record.id) ?? 0) + contextCut);
      return JSON.stringify(record).length;
    } finally {
      this.#archiving.delete(record.id);
    }
  }

  /** Replaces what the model is shown for a conversation. */
  async setContext(id: string, context: ModelContext): Promise<void> {
    return this.#use(async (held) => {
      const record = await this.#record(held, id);
      record.context = ModelContextSchema.parse(context);
      this.#bytes.delete(record.id);
      await this.#persist(record);
    });
  }

  /** A read-only snapshot of a conversation. */
  async get(id: string): Promise<Conversation> {
    return this.#use(async (held) => {
      const record = await this.#record(held, id);
      return view(record, this.#contextCut.get(record.id));
    });
  }

  /** A snapshot of a conversation if it exists, without creating it (for readers such as side tasks). */
  async peek(id: string): Promise<Conversation | undefined> {
    return this.#use(async (held) => {
      const record = await this.#loaded(held, id);
      return record === undefined ? undefined : view(record, this.#contextCut.get(record.id));
    });
  }

  /** The scope a conversation was opened in (`platform:userId` of the person whose settings it took), without creating it. */
  async scopeOf(id: string): Promise<string | undefined> {
    return this.#use(async (held) => {
      return (await this.#loaded(held, id))?.scope;
    });
  }

  /** A digest of a conversation's history and context, to show nobody else changed them. */
  async fingerprint(id: string): Promise<string> {
    return this.#use(async (held) => {
      return fingerprintOf(await this.#record(held, id));
    });
  }

  /**
   * Opens (creating, in `scope`) the root a request claims for `id`, and refuses it unless it is a
   * root: a child of a child would take its settings from a record nobody changes (found by an
   * attack: a conversation rooted at a child of a readonly root wrote at the child's old tier).
   * Checked before `id` is made, so a refused claim creates no child.
   */
  async #claimedRoot(held: Set<string>, id: string, claimed: string | undefined, scope: string | undefined): Promise<void> {
    if (claimed === undefined || claimed === id) return;
    const root = await this.#record(held, claimed, undefined, scope);
    const top = await this.#top(held, root);
    if (top.id !== claimed) {
      throw new SessionError('root-mismatch', `'${shownText(claimed)}' is not a root conversation: it belongs to '${shownText(top.id)}', so '${shownText(id)}' cannot be rooted there; nothing was done.`, {
        fix: `send session.rootId '${shownText(top.id)}' for it`,
      });
    }
  }

  /**
   * The root record above `record` (itself for a root). Kept records made before roots were
   * checked may chain (a child of a child): the chain is followed to its top, whose settings
   * rule; a chain that loops is refused.
   */
  async #top(held: Set<string>, record: SessionRecord): Promise<SessionRecord> {
    let current = record;
    for (let depth = 0; current.rootId !== undefined && current.rootId !== current.id; depth++) {
      if (depth >= 64) throw new SessionError('root-mismatch', `conversation '${shownText(record.id)}' has no root: its chain of roots loops or is deeper than 64; nothing was done.`, { fix: "move its session files out of the data directory's sessions folder to start it afresh" });
      current = await this.#record(held, current.rootId);
    }
    return current;
  }

  /**
   * The record of `id` in memory, else read from the store, one read at a time per id: two opens of
   * one conversation at once share one record (found by an attack: two opens of a new child naming
   * different roots each made their own, the last one kept, and a call that claimed a readonly
   * root ran under the other's settings).
   */
  async #loaded(held: Set<string>, id: string): Promise<SessionRecord | undefined> {
    // held before any await: a record read in for this call is not dropped before it has it
    if (!held.has(id)) {
      held.add(id);
      this.#held.set(id, (this.#held.get(id) ?? 0) + 1);
    }
    const cached = this.#records.get(id);
    if (cached) {
      // the most recently used last: #trim drops from the front
      this.#records.delete(id);
      this.#records.set(id, cached);
      return cached;
    }
    let loading = this.#loading.get(id);
    if (loading === undefined) {
      loading = this.#stored(id)
        .then((stored) => {
          if (stored !== undefined && !this.#records.has(id)) {
            this.#records.set(id, stored);
            this.#head(stored);
          }
          return this.#records.get(id);
        })
        .finally(() => this.#loading.delete(id));
      this.#loading.set(id, loading);
    }
    return await loading;
  }

  async #record(held: Set<string>, id: string, rootId?: string, scope?: string): Promise<SessionRecord> {
    const found = await this.#loaded(held, id);
    if (found) return found;
    // made and kept before the next await: whoever awaited the same read finds this one
    const made = this.#records.get(id);
    if (made) return made;
    const record: SessionRecord = {
      id,
      ...(rootId !== undefined ? { rootId } : {}),
      ...(scope !== undefined ? { scope } : {}),
      settings: { ...this.lastUsed(scope) },
      history: [],
      context: { messages: [], notes: [] },
    };
    this.#records.set(id, record);
    this.#head(record);
    await this.#persist(record);
    return record;
  }

  /**
   * The stored record of `id`, if any. Its file is named by a digest of the id's UTF-8 form: an id
   * without one (a lone surrogate) is refused before any file is named, and a file holding another
   * id's record (planted, or a digest shared) is refused, never served as this conversation.
   */
  async #stored(id: string): Promise<SessionRecord | undefined> {
    checkSessionId(id);
    let stored: SessionRecord | undefined;
    try {
      stored = await this.store?.read(fileOf(id), SessionRecordSchema);
    } catch (error) {
      // A file cut short or edited by hand: said with the file and the way out, not as a bare
      // JSON.parse message every call of the conversation answered with (found by an attack, h105).
      throw new TypeError(
        `the stored conversation file for session '${shownText(id)}' (${fileOf(id)}.json in the data directory's sessions folder) cannot be read (${describeError(error)}); it was not opened. Move that file out of the data directory's sessions folder to start this conversation afresh (its history stays in the file you moved).`,
      );
    }
    if (stored !== undefined && stored.id !== id) {
      throw new TypeError(
        `the stored conversation file for session '${shownText(id)}' holds conversation '${shownText(stored.id)}', not '${shownText(id)}'; it was not opened. Move the file ${fileOf(id)}.json out of the data directory's sessions folder to start this conversation afresh.`,
      );
    }
    return stored;
  }

  /** Notes a record's root and settings (see #heads): when it enters memory and when its settings change. */
  #head(record: SessionRecord): void {
    this.#heads.set(record.id, { rootId: record.rootId, settings: record.settings });
  }

  /** The settings of `id` from #heads, its chain followed to its root; `undefined` when a link is not known (the records are read then). */
  #headSettings(id: string): SessionSettings | undefined {
    let current = this.#heads.get(id);
    let at = id;
    for (let depth = 0; current !== undefined && current.rootId !== undefined && current.rootId !== at; depth++) {
      if (depth >= 64) return undefined;
      at = current.rootId;
      current = this.#heads.get(at);
    }
    return current?.settings;
  }

  async #persist(record: SessionRecord): Promise<void> {
    await this.store?.write(fileOf(record.id), record);
  }

  /**
   * Runs a call that reads or changes records, holding each it reads (`held`) until it ends; memory
   * is then trimmed to the bound. A call holds its record across awaits and changes it in place, so
   * a record dropped under it and read again would be two; waiting for no call at all to be under
   * way let a steady stream of overlapping calls keep every conversation in memory (found by an attack, h107).
   */
  async #use<T>(work: (held: Set<string>) => Promise<T>): Promise<T> {
    const held = new Set<string>();
    try {
      return await work(held);
    } finally {
      for (const id of held) {
        const count = (this.#held.get(id) ?? 1) - 1;
        if (count > 0) this.#held.set(id, count);
        else this.#held.delete(id);
      }
      this.#trim();
    }
  }

  /** Drops the least recently used records no call holds past the bound; without a store, none (memory is all there is). */
  #trim(): void {
    if (this.store === undefined || this.#records.size <= this.resident) return;
    for (const id of this.#records.keys()) {
      if (this.#records.size <= this.resident) break;
      if (this.#held.has(id)) continue;
      this.#records.delete(id);
      this.#bytes.delete(id);
    }
  }
}

/**
 * Where to cut `messages` so that what stays is at most `keep` characters of JSON, starting at a
 * message `starts` accepts; the last message always stays.
 */
function cutBefore(messages: readonly ChatMessage[], keep: number, starts: (m: ChatMessage) => boolean): number {
  let kept = 0;
  let cut = messages.length - 1;
  for (let i = messages.length - 1; i >= 0; i--) {
    kept += JSON.stringify(messages[i]).length + 1;
    if (kept > keep && i < messages.length - 1) break;
    if (starts(messages[i]!)) cut = i;
  }
  return Math.max(0, cut);
}

/** The kernel's sessions, as a service other plugins inject. */
export const sessions = defineService<Sessions>('sessions');

/** Refuses an id that cannot name a conversation (see {@link Sessions}' stored records). */
function checkSessionId(id: string): void {
  if (typeof id !== 'string' || id === '') throw new TypeError('a session id must be a non-empty string');
  const problem = idProblem(id);
  if (problem !== undefined) throw new TypeError(`session id '${escapeInvisible(shownText(id))}' ${problem}; nothing was opened.`);
}

function fileOf(id: string): string {
  return `session-${createHash('sha256').update(id).digest('hex').slice(0, 32)}`;
}

function view(record: SessionRecord, contextArchived = 0): Conversation {
  return Object.freeze({
    contextArchived,
    id: record.id,
    ...(record.rootId !== undefined ? { rootId: record.rootId } : {}),
    ...(record.scope !== undefined ? { scope: record.scope } : {}),
    history: Object.freeze(structuredClone(record.history)),
    context: Object.freeze(structuredClone(record.context)),
  });
}

/** A conversation's root (`root`, the top of its chain), after checking the root a request claims for it (see {@link Sessions.rootOf}). */
function rootChecked(id: string, root: string, claimed: string | undefined): string {
  if (claimed !== undefined && claimed !== root) {
    throw new SessionError(
      'root-mismatch',
      `conversation '${shownText(id)}' belongs to '${shownText(root)}', not to '${shownText(claimed)}' as the turn says; nothing was done.`,
      { fix: `send session.rootId '${shownText(root)}' for it${root === id ? ' (or none: it is a root conversation)' : ''}` },
    );
  }
  return root;
}

import { link, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { DurableStore, LogRead } from '@aalis/core';
import { describeError, openForAppend, openForRead, writeFileAtomic } from '@aalis/core';
import { z } from 'zod';
import { AUDIT_CHECKPOINT, checkpointMatches, parseCheckpoint, tailHashOf } from './audit-checkpoint.js';
import { type AuditPage, type AuditPageQuery, readAuditPage } from './audit-page.js';
import { AUDIT_LOG, type AuditEntry, type AuditRecord, AuditRecordSchema, parseLine } from './audit-record.js';
import { type AuditedGrant, AuditState, type LeftPending } from './audit-state.js';
import { readLinesForward } from './log-lines.js';


/** When the audit log moves its lines to an archive file and starts a new one. */
export const AuditRotationSchema = z
  .object({
    /** Rotate once the log holds this many bytes (default 64 MiB). */
    maxBytes: z
      .number()
      .int()
      .min(4096)
      .default(64 * 1024 * 1024),
    /** Rotate once the log's first line is this old (default 30 days). */
    maxAgeMs: z
      .number()
      .int()
      .min(1000)
      .default(30 * 24 * 60 * 60 * 1000),
  })
  .strict()
  .prefault({});
/** When the audit log rotates. */
export type AuditRotation = z.output<typeof AuditRotationSchema>;

/** Lines appended between two checkpoints while running: a kill costs a start at most this many lines. */
const CHECKPOINT_EVERY = 1000;

/** What recovery found, and what it could not read. */
export interface RecoveryFindings {
  readonly left: LeftPending[];
  /** The grants the audit log shows in force, by id: the only grants a restart may honour. */
  readonly grants: Map<string, AuditedGrant>;
  /** Problems that did not stop recovery (skipped log lines). */
  readonly warnings: string[];
}

/** What {@link AuditLog} needs besides its store. */
export interface AuditLogOptions {
  readonly now?: () => number;
  readonly rotation?: AuditRotation;
  /** Told about a checkpoint or rotation that failed (the lines themselves were written). */
  readonly warn?: (message: string) => void;
}

/**
 * The append-only audit log: who asked, what, which rule, who answered, the outcome, when.
 *
 * A start never reads the whole log: {@link recover} folds only the lines after the side
 * index's checkpoint (`audit.index.json`), and the log rotates by size or age into archive
 * files whose successor's first line (`rotated`) carries what is still in force.
 */
export class AuditLog {
  readonly #now: () => number;
  readonly #rotation: AuditRotation;
  readonly #warn: (message: string) => void;
  #state = new AuditState();
  /** Whether {@link recover} ran: only then is the state the log's, and checkpoints are written. */
  #tracking = false;
  /** An append failed: what is on disk may differ from the state, so no more checkpoints this run. */
  #broken = false;
  /**
   * The log holds lines this run's state does not (another process appended: an `aalis exec` on
   * this data directory runs the approval plugin too): an index or a rotation's first line written
   * now would carry a state without them, and a start would skip them (an ask left open, a grant
   * revoked). So neither is written for the rest of this run; the next start reads them.
   */
  #foreign = false;
  /** The log's size as far as this run's state covers it exactly (its own appends counted). */
  #size = 0;
  /**
   * The bytes of the current log's first line when this run wrote it (a rotation's `rotated` line,
   * which carries every open ask and grant in force): not counted toward `maxBytes`. Counted, a
   * state larger than `maxBytes` rotated the log at every line, each rotation writing the whole
   * state again (an archive file and an index each): 365 grants and a 32 KiB limit made 1,900
   * files, 89 MB, in minutes (found by an attack, h105).
   */
  #carried = 0;
  #startedAt = 0;
  #sinceCheckpoint = 0;
  /** The file and offset the index on disk describes: an index that would not change is not rewritten. */
  #checkpointed: { ino: number; offset: number } | undefined;
  /**
   * Nothing was appended or rotated by this run since the index was last written or found to
   * match: a checkpoint then has nothing to add and does no I/O (a start and a stop stay
   * independent of the log's size and cost no file operations beyond the start's own check).
   * A line appended by another writer is not in this run's state, so it must not be indexed
   * by this run anyway: the next start reads it after the index's offset.
   */
  #indexCurrent = false;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: DurableStore,
    options: AuditLogOptions = {},
  ) {
    this.#now = options.now ?? Date.now;
    this.#rotation = options.rotation ?? AuditRotationSchema.parse({});
    this.#warn = options.warn ?? ((message) => process.emitWarning(message));
  }

  /** The current log file. */
  get file(): string {
    return join(this.store.dir, `${AUDIT_LOG}.jsonl`);
  }

  /** Appends one line; resolves when it is on disk. Lines are written in call order. */
  append(entry: AuditEntry): Promise<void> {
    const record = { v: 1, at: new Date(this.#now()).toISOString(), ...entry } as AuditRecord;
    return this.#serial(async () => {
      try {
        await this.store.append(AUDIT_LOG, record);
      } catch (error) {
        this.#broken = true;
        throw error;
      }
      if (!this.#tracking) return;
      this.#indexCurrent = false;
      this.#state.apply(record);
      this.#size += Buffer.byteLength(JSON.stringify(record)) + 1;
      // The line is on disk: a failed checkpoint or rotation is told, never the append's failure.
      try {
        if (++this.#sinceCheckpoint >= CHECKPOINT_EVERY) await this.#checkpoint();
        if (this.#rotationDue()) await this.#rotate();
      } catch (error) {
        this.#warn(`approval: audit log upkeep failed (${describeError(error)}); the next start reads more of the log.`);
      }
    });
  }

  /**
   * Finds what the log says a start needs (asks left open, grants in force) from the side
   * index and the lines after it, then starts keeping that state as lines are appended.
   * A missing or mismatched index means the log is read from its start, a chunk at a time.
   */
  recover(): Promise<RecoveryFindings> {
    return this.#serial(async () => {
      const warnings: string[] = [];
      let state = new AuditState();
      let startedAt: number | undefined;
      let handle: Awaited<ReturnType<typeof openForRead>> | undefined;
      try {
        handle = await openForRead(this.file);
      } catch (error) {
        if (!(await missing(this.file))) throw error;
      }
      // No log: nothing to index until a line is appended.
      let indexCurrent = handle === undefined;
      if (handle) {
        try {
          const [checkpoint, stat] = await Promise.all([
            this.store.read<unknown>(AUDIT_CHECKPOINT).then((value) => (value === undefined ? undefined : parseCheckpoint(value, join(this.store.dir, `${AUDIT_CHECKPOINT}.json`)))).catch((error: unknown) => {
              warnings.push(`the audit log's index could not be used (${describeError(error)}); the log was read from its start.`);
              return undefined;
            }),
            handle.stat(),
          ]);
          let start = 0;
          if (checkpoint && (await checkpointMatches(checkpoint, handle, stat))) {
            state = AuditState.of(checkpoint.state);
            start = checkpoint.offset;
            startedAt = checkpoint.startedAt;
            this.#checkpointed = { ino: checkpoint.ino, offset: checkpoint.offset };
            // The index covers the whole log: nothing after it to read, nothing new to index.
            indexCurrent = start === stat.size;
          }
          if (indexCurrent) this.#size = stat.size;
          else await this.#foldFrom(handle, start, state, warnings, (at) => {
            startedAt ??= at;
          });
        } finally {
          await handle.close();
        }
      }
      this.#state = state;
      this.#startedAt = startedAt !== undefined && Number.isFinite(startedAt) ? startedAt : this.#now();
      this.#tracking = true;
      this.#indexCurrent = indexCurrent;
      await this.#checkpoint();
      return { left: [...state.open.values()], grants: new Map(state.grants), warnings };
    });
  }

  /** Applies the log's lines from `start` to `state`, closes a torn last line, and notes the size. */
  async #foldFrom(handle: FileHandle, start: number, state: AuditState, warnings: string[], firstAt: (at: number) => void): Promise<void> {
          let invalid = 0;
          const read = await readLinesForward(handle, start, (line) => {
            if (line.length === 0) return;
            const parsed = parseLine(line);
            if (!parsed) {
              invalid++;
              return;
            }
            firstAt(Date.parse(parsed.at));
            state.apply(parsed);
          });
          if (invalid > 0) warnings.push(`the approval audit log has ${invalid} line(s) that do not parse; they were skipped.`);
          if (read.torn) {
            // End the torn line, or the next record would be glued to it and lost with it.
            const append = await openForAppend(this.file, { mode: 0o600 });
            try {
              await append.write('\n');
              await append.datasync();
            } finally {
              await append.close();
            }
            warnings.push('the approval audit log ended in a line cut short by a crash; it was skipped and closed.');
          }
          this.#size = (await handle.stat()).size + (read.torn ? 1 : 0);
  }

  /** Writes the side index now, and rotates the log if it is due (start, stop). */
  upkeep(): Promise<void> {
    return this.#serial(async () => {
      await this.#checkpoint();
      if (this.#rotationDue()) await this.#rotate();
    });
  }

  /** One page of the log, newest lines first read, from the end (see {@link readAuditPage}). */
  page(query: AuditPageQuery): Promise<AuditPage> {
    return readAuditPage(this.store.dir, query);
  }

  /** Reads the whole current log file back (for tests and tools; a start never does). */
  read(): Promise<LogRead<AuditRecord>> {
    return this.store.readLog(AUDIT_LOG, AuditRecordSchema);
  }

  #rotationDue(): boolean {
    if (!this.#tracking || this.#broken || this.#foreign || this.#size === 0) return false;
    return this.#size - this.#carried >= this.#rotation.maxBytes || this.#now() - this.#startedAt >= this.#rotation.maxAgeMs;
  }

  /**
   * Moves the current lines to an archive name and starts a new log whose first line carries
   * the state. A crash between the steps leaves either the old log (with an extra name, reused
   * by the next try) or the new one, whose first line is all a start needs.
   */
  async #rotate(): Promise<void> {
    const current = await stat(this.file);
    if (this.#sawForeign(current.size)) return;
    const archive = `${AUDIT_LOG}-${new Date(this.#startedAt).toISOString().replace(/[-:.]/g, '')}-${current.ino}.jsonl`;
    const archivePath = join(this.store.dir, archive);
    try {
      // A hard link, not a rename: until the new log replaces it, the old one stays current.
      // link(2) does not follow a symlink at the source and fails on an existing target.
      await link(this.file, archivePath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || (await stat(archivePath)).ino !== current.ino) throw error;
    }
    const now = this.#now();
    const first = `${JSON.stringify({ v: 1, at: new Date(now).toISOString(), event: 'rotated', from: archive, state: this.#state.snapshot() })}\n`;
    await writeFileAtomic(this.file, first, { mode: 0o600 });
    this.#indexCurrent = false;
    this.#startedAt = now;
    this.#size = Buffer.byteLength(first);
    this.#carried = this.#size;
    await this.#checkpoint();
  }

  /** True (and noted, told once) when the log is not the size this run's state covers: another writer's lines are in it. */
  #sawForeign(size: number): boolean {
    if (size === this.#size) return false;
    if (!this.#foreign) this.#warn(`approval: another process appended to the audit log ${this.file} (an aalis exec on this data directory?); this run no longer indexes or rotates it, and the next start reads those lines.`);
    this.#foreign = true;
    return true;
  }

  async #checkpoint(): Promise<void> {
    if (!this.#tracking || this.#broken || this.#foreign || this.#indexCurrent) return;
    let handle: Awaited<ReturnType<typeof openForRead>>;
    try {
      handle = await openForRead(this.file);
    } catch (error) {
      if (await missing(this.file)) return;
      throw error;
    }
    try {
      const { dev, ino, size } = await handle.stat();
      if (this.#sawForeign(size)) return;
      if (this.#checkpointed?.ino === ino && this.#checkpointed.offset === size) return;
      const tail = await tailHashOf(handle, size);
      await this.store.write(AUDIT_CHECKPOINT, { v: 1, dev, ino, offset: size, tail, startedAt: this.#startedAt, state: this.#state.snapshot() });
      this.#sinceCheckpoint = 0;
      this.#checkpointed = { ino, offset: size };
      this.#indexCurrent = true;
    } finally {
      await handle.close();
    }
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(task, task);
    this.#chain = next.catch(() => {});
    return next;
  }
}

async function missing(file: string): Promise<boolean> {
  try {
    await stat(file);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

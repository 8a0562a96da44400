import { DurableStore } from '@aalis/core';
import { type LogEntry, LogEntrySchema, type NewLogEntry } from './task.js';

const LOG = 'log';

/**
 * A task's full log, kept beside its files in the task's `.pod` directory (read-only to the
 * task's own code) as an append-only JSON-lines file, and in memory while the daemon runs.
 */
export class TaskLog {
  #entries: LogEntry[] | undefined;
  #store: Promise<DurableStore> | undefined;

  constructor(private readonly dir: string) {}

  /** Appends one entry, numbered and stamped. */
  async append(entry: NewLogEntry): Promise<LogEntry> {
    const entries = await this.entries();
    const full = { ...entry, seq: entries.length + 1, at: Date.now() } as LogEntry;
    entries.push(full);
    await (await this.#open()).append(LOG, full);
    return full;
  }

  /** Every entry, or those after sequence number `after`. */
  async read(after = 0): Promise<LogEntry[]> {
    return (await this.entries()).filter((e) => e.seq > after);
  }

  async entries(): Promise<LogEntry[]> {
    if (this.#entries === undefined) {
      try {
        const { records } = await (await this.#open()).readLog(LOG, LogEntrySchema);
        this.#entries ??= records;
      } catch {
        this.#entries ??= []; // the directory was cleaned up
      }
    }
    return this.#entries;
  }

  #open(): Promise<DurableStore> {
    this.#store ??= DurableStore.open(this.dir, { syncAppends: false });
    return this.#store;
  }
}

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { realDirOf } from './dir-anchor.js';
import { cleanStaleTemps, makeDirs, openForAppend, TEMP_SUFFIX, writeFileAtomic } from './safe-file.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** What reading a log found: the records, and lines it had to skip. */
export interface LogRead<T> {
  readonly records: T[];
  /** A last line cut short by a crash (no newline): skipped, never half-parsed. */
  readonly torn: number;
  /** Whole lines that were not valid JSON or failed the schema. */
  readonly invalid: number;
}

/** Options for {@link DurableStore.open}. */
export interface StoreOptions {
  /** fsync every append (default true): an audit line acknowledged is a line on disk. */
  readonly syncAppends?: boolean;
}

/**
 * A small durable store for plugin state in one directory: documents replaced atomically
 * (temp file, fsync, rename, fsync of the directory, through the safe file layer: no symlink in
 * the directory is followed) and append-only JSON-lines logs.
 * After a crash a document is the old or the new version, never a mix, and no log line is torn.
 */
export class DurableStore {
  readonly #queues = new Map<string, Promise<unknown>>();
  /** Logs whose end this process has checked: a line a crash cut short is sealed before the next append. */
  readonly #sealed = new Set<string>();

  private constructor(
    readonly dir: string,
    readonly options: Required<StoreOptions>,
  ) {}

  /** Opens (creating) a store directory and removes temp files a crash left behind. */
  static async open(dir: string, options: StoreOptions = {}): Promise<DurableStore> {
    const real = await realDirOf(dir);
    await makeDirs(real, { mode: 0o700 });
    await cleanStaleTemps(real);
    return new DurableStore(real, { syncAppends: options.syncAppends ?? true });
  }

  /** Reads a document; `undefined` when it was never written. A schema failure is an error naming the file. */
  async read<T>(name: string, schema?: z.ZodType<T>): Promise<T | undefined> {
    const file = this.#path(name, '.json');
    let text: string;
    try {
      text = await readDocument(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // the file is named: a bare "Unterminated string in JSON at position 14466" stopped a start
      // and said nothing of which of the data directory's files it was (found by an attack, h105);
      // what it holds is not quoted (V8's message quotes its first characters: a document made a
      // link to /etc/shadow showed a root daemon's hash there)
      const where = /position \d+/.exec((error as Error).message)?.[0];
      throw new Error(`${file} is not valid JSON (${where === undefined ? 'it does not parse' : `at ${where}`}): cut short or changed by hand`);
    }
    if (!schema) return value as T;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new Error(`${file} does not hold what was expected: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
    }
    return parsed.data;
  }

  /** Replaces a document atomically. Writes to one name are applied in call order. */
  async write(name: string, value: unknown): Promise<void> {
    const file = this.#path(name, '.json');
    const text = `${JSON.stringify(value, null, 2)}\n`;
    return this.#serial(file, () => writeFileAtomic(file, text, { mode: 0o600 }));
  }

  /** Appends one record as one JSON line, in a single write. */
  async append(log: string, record: unknown): Promise<void> {
    const file = this.#path(log, '.jsonl');
    const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    return this.#serial(file, async () => {
      const handle = await openForAppend(file, { mode: 0o600 });
      try {
        if (!this.#sealed.has(file)) {
          // A torn last line would swallow this record too; end it first so only it is lost.
          const { size } = await handle.stat();
          if (size > 0) {
            const last = Buffer.alloc(1);
            await handle.read(last, 0, 1, size - 1);
            if (last[0] !== 0x0a) await handle.write('\n');
          }
          this.#sealed.add(file);
        }
        let written = 0;
        while (written < line.length) {
          const { bytesWritten } = await handle.write(line, written, line.length - written);
          written += bytesWritten;
        }
        if (this.options.syncAppends) await handle.datasync();
      } finally {
        await handle.close();
      }
    });
  }

  /** Reads every whole line of a log; a torn last line or an invalid line is counted, not returned. */
  async readLog<T>(log: string, schema?: z.ZodType<T>): Promise<LogRead<T>> {
    let text: string;
    try {
      text = await readDocument(this.#path(log, '.jsonl'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], torn: 0, invalid: 0 };
      throw error;
    }
    const lines = text.split('\n');
    const last = lines.pop();
    const torn = last !== undefined && last !== '' ? 1 : 0;
    const records: T[] = [];
    let invalid = 0;
    for (const line of lines) {
      if (line === '') continue;
      try {
        const value: unknown = JSON.parse(line);
        if (!schema) {
          records.push(value as T);
          continue;
        }
        const parsed = schema.safeParse(value);
        if (parsed.success) records.push(parsed.data);
        else invalid++;
      } catch {
        invalid++;
      }
    }
    return { records, torn, invalid };
  }

  #path(name: string, extension: string): string {
    if (!NAME.test(name) || name.endsWith(TEMP_SUFFIX)) {
      throw new TypeError(
        `store name '${name}' is refused: use letters, digits, '.', '_' and '-' only (no path separators), at most 128 characters.`,
      );
    }
    return join(this.dir, `${name}${extension}`);
  }

  #serial(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    this.#queues.set(key, next.catch(() => {}));
    return next;
  }
}

/**
 * A document's text, opened without waiting and read only when it is a regular file: a FIFO at a
 * document's name held the daemon's start for good, and SIGTERM did not end it (found by an
 * attack, h105); a device or a directory is refused the same way, saying so.
 */
async function readDocument(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${file} is not a regular file (a FIFO, a device or a folder stands at a document's name): move it out of the data directory`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

import { processAlive } from './process-alive.js';
import { readdir } from 'node:fs/promises';
import { checkedPath, realDirOf, splitPath } from './dir-anchor.js';
import { isTempName, makeDirs, openForAppend, readFileNoFollow, removeFile, type TempRecorder, writeFileAtomic } from './safe-file.js';
import { SafeFileError } from './safe-file-error.js';

const FILE = '.safe-file-temps';
/** Past this many lines the journal is rewritten with only the temps still in flight. */
const COMPACT_AFTER = 2000;

/**
 * A journal of the temp files the safe file layer makes anywhere (write_file writes all over a
 * workspace, so no single directory can be swept): each temp's path is recorded and fsynced
 * before the temp exists. {@link TempJournal.open} removes every recorded temp a crash left
 * behind (only regular files with a temp name, never followed) and starts the journal afresh.
 */
export class TempJournal implements TempRecorder {
  readonly #inFlight = new Set<string>();
  #lines = 0;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(
    /** The journal file. */
    readonly file: string,
    /** The temp files a previous run left and this start removed. */
    readonly cleaned: readonly string[],
  ) {}

  /**
   * Opens this process's journal in `dir` (the daemon's own; made when missing) and removes the
   * temps that processes now gone left: each process journals to `.safe-file-temps.<pid>`, so a
   * second process on the same data directory never removes a temp the first is still writing.
   */
  static async open(dir: string): Promise<TempJournal> {
    const real = await realDirOf(dir);
    await makeDirs(real, { mode: 0o700 });
    const cleaned: string[] = [];
    for (const name of await readdir(real)) {
      const pid = journalPid(name);
      if (pid === undefined || (pid !== process.pid && processAlive(pid))) continue;
      cleaned.push(...(await removeRecorded(`${real}/${name}`)));
      if (pid !== process.pid) await removeFile(`${real}/${name}`);
    }
    const file = `${real}/${FILE}.${process.pid}`;
    await writeFileAtomic(file, '', { mode: 0o600 });
    return new TempJournal(file, cleaned);
  }

  /** Records a temp file before it is made (one line, fsynced). */
  record(temp: Buffer): Promise<void> {
    this.#inFlight.add(temp.toString('hex'));
    return this.#serial(async () => {
      if (this.#lines >= COMPACT_AFTER) {
        await writeFileAtomic(this.file, [...this.#inFlight].map((t) => `${t}\n`).join(''), { mode: 0o600 });
        this.#lines = this.#inFlight.size;
        return;
      }
      const handle = await openForAppend(this.file, { mode: 0o600 });
      try {
        await handle.write(`${temp.toString('hex')}\n`);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      this.#lines++;
    });
  }

  /** The temp is gone: a later compaction forgets it. */
  done(temp: Buffer): void {
    this.#inFlight.delete(temp.toString('hex'));
  }

  #serial(task: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(task, task);
    this.#queue = next.catch(() => {});
    return next;
  }
}

/** The pid a journal file belongs to (the legacy name without one counts as a process gone). */
function journalPid(name: string): number | undefined {
  if (name === FILE) return 0;
  const match = /^\.safe-file-temps\.(\d+)$/.exec(name);
  return match ? Number(match[1]) : undefined;
}


/** Removes every temp a journal file records (regular files with a temp name only, never followed). */
async function removeRecorded(file: string): Promise<string[]> {
  const removed: string[] = [];
  let text = '';
  try {
    text = (await readFileNoFollow(file)).toString('latin1');
  } catch (error) {
    if (error instanceof SafeFileError && error.code === 'missing') return removed;
    throw error;
  }
  for (const line of text.split('\n')) {
    // A torn last line is an incomplete record: its temp was never made (record comes first).
    if (!/^(?:[0-9a-f]{2})+$/.test(line)) continue;
    const temp = Buffer.from(line, 'hex');
    try {
      if (!isTempName(splitPath(checkedPath(temp)).name)) continue;
      if (await removeFile(temp)) removed.push(temp.toString('utf8'));
    } catch {
      // Its directory is gone or moved, or it is not a file: nothing of ours to remove there.
    }
  }
  return removed;
}

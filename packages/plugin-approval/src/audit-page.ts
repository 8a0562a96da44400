import { join } from 'node:path';
import { openForRead } from '@aalis/core';
import { AUDIT_LOG, type AuditRecord, parseLine } from './audit-record.js';
import { readLinesBackward } from './log-lines.js';
import { AalisError } from '@aalis/core';

/** Names the audit log's files may have: the current log and its archives. */
const SEGMENT = /^audit(-[0-9TZ]+-[0-9]+)?\.jsonl$/;

/** Which page of the audit log to read. */
export interface AuditPageQuery {
  /** Lines of this conversation only. */
  readonly session?: string | undefined;
  readonly limit: number;
  /** The file to read (the current log when absent), from a previous page's `next`. */
  readonly segment?: string | undefined;
  /** Read lines before this byte offset (the file's end when absent), from a previous page's `next`. */
  readonly before?: number | undefined;
  /** Only lines from this byte offset of the file on (a previous page's `end`): what was appended since. */
  readonly after?: number | undefined;
  /** The `file` of the page `after` came from: when the log was rotated since, `after` is ignored and the page says `reset`. */
  readonly file?: string | undefined;
}

/** One page of the audit log, oldest first, with where the older lines continue. */
export interface AuditPage {
  readonly records: AuditRecord[];
  /** Where the next (older) page starts; absent at the log's very beginning. */
  readonly next?: { readonly segment: string; readonly before: number | undefined };
  /** Lines on the way that did not parse. */
  readonly invalid: number;
  /** The file read and its end when read: ask again with `after: end` for only the lines appended since. */
  readonly segment: string;
  readonly end: number;
  /** Which file that was (its inode): pass it back with `after`. */
  readonly file: string;
  /** `after` was given but the log is another file now (it rotated): this is a whole page, not what came after. */
  readonly reset?: true;
}

/** Thrown for a segment name that is not one of the log's files (the API answers 400). */
export class AuditPageError extends AalisError<'bad-request'> {
  override readonly name = 'AuditPageError';
  constructor(message: string) {
    super('bad-request', message);
  }
}

/**
 * Reads the newest `limit` lines before a point of the audit log, backwards from the end a
 * chunk at a time, so a page costs the same in a log of any length; across a rotation it
 * continues in the file the `rotated` line names.
 */
export async function readAuditPage(dir: string, query: AuditPageQuery): Promise<AuditPage> {
  const segment = query.segment ?? `${AUDIT_LOG}.jsonl`;
  if (!SEGMENT.test(segment)) throw new AuditPageError(`'${segment}' is not a file of the audit log; use the 'next' of a previous page.`);
  let handle: Awaited<ReturnType<typeof openForRead>>;
  try {
    handle = await openForRead(join(dir, segment));
  } catch (error) {
    if (query.segment === undefined && (error as { code?: string }).code === 'missing') return { records: [], invalid: 0, segment, end: 0, file: '', ...(query.after !== undefined ? { reset: true as const } : {}) };
    throw error;
  }
  const found: { record: AuditRecord; offset: number }[] = [];
  // Refused replies written before they named their session belong to the session of their ask.
  const unplaced = new Map<string, { record: AuditRecord; offset: number }[]>();
  let invalid = 0;
  let first: AuditRecord | undefined;
  let oldest = Number.POSITIVE_INFINITY;
  let end = 0;
  let file = '';
  let after = query.after ?? 0;
  let reset = false;
  try {
    const { size, ino } = await handle.stat();
    file = String(ino);
    if (query.after !== undefined && (query.file !== file || query.after > size)) {
      after = 0;
      reset = true;
    }
    const before = Math.min(query.before ?? size, size);
    end = before;
    await readLinesBackward(handle, before, (line, offset) => {
      if (offset < after) return false;
      oldest = offset;
      const record = parseLine(line);
      if (!record) {
        invalid++;
        return true;
      }
      if (offset === 0) first = record;
      if (query.session === undefined) found.push({ record, offset });
      else if ('session' in record && record.session !== undefined) {
        if (record.session === query.session) found.push({ record, offset });
        if (record.event === 'requested' && record.session === query.session) found.push(...(unplaced.get(record.id) ?? []));
      } else if (record.event === 'reply-refused' && record.id !== null) {
        unplaced.set(record.id, [...(unplaced.get(record.id) ?? []), { record, offset }]);
      }
      return found.length < query.limit;
    });
  } finally {
    await handle.close();
  }
  const page = found.sort((a, b) => b.offset - a.offset).slice(0, query.limit);
  const cut = page.length === query.limit ? (page.at(-1)?.offset ?? oldest) : oldest;
  const records = page.reverse().map((p) => p.record);
  const at = { invalid, segment, end, file, ...(reset ? { reset: true as const } : {}) };
  if (cut > 0 && Number.isFinite(cut) && page.length === query.limit) return { records, next: { segment, before: cut }, ...at };
  const start = first as AuditRecord | undefined;
  if (after === 0 && start?.event === 'rotated' && start.from !== null) return { records, next: { segment: start.from, before: undefined }, ...at };
  return { records, ...at };
}

import type { FileHandle } from 'node:fs/promises';

/** Bytes read at a time: memory stays flat whatever the log's size. */
const CHUNK = 1 << 20;
const NEWLINE = 0x0a;

/** What a forward read found. */
export interface ForwardRead {
  /** The offset just past the last whole line (where the next read starts). */
  readonly end: number;
  /** Whether bytes after `end` form a line cut short (no newline yet). */
  readonly torn: boolean;
}

/**
 * Calls `visit` with every whole line from `start` on, in order, reading a chunk at a time:
 * a log of any size is read in constant memory (a line longer than a chunk is joined).
 */
export async function readLinesForward(handle: FileHandle, start: number, visit: (line: Buffer) => void, chunk = CHUNK): Promise<ForwardRead> {
  let position = start;
  let carry: Buffer = Buffer.alloc(0);
  let lineStart = start;
  const buffer = Buffer.alloc(chunk);
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, chunk, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let from = 0;
    for (let cut = buffer.indexOf(NEWLINE, 0); cut !== -1 && cut < bytesRead; cut = buffer.indexOf(NEWLINE, from)) {
      const piece = buffer.subarray(from, cut);
      const line = carry.length > 0 ? Buffer.concat([carry, piece]) : piece;
      carry = Buffer.alloc(0);
      lineStart += line.length + 1;
      visit(line);
      from = cut + 1;
    }
    if (from < bytesRead) carry = Buffer.concat([carry, buffer.subarray(from, bytesRead)]);
  }
  return { end: lineStart, torn: carry.length > 0 };
}

/**
 * Calls `visit` with whole lines before `before`, newest first, with each line's start offset,
 * until it returns `false` or the file's start is reached. Reads backwards a chunk at a time.
 * Bytes after the last newline before `before` (a torn line) are not visited.
 */
export async function readLinesBackward(handle: FileHandle, before: number, visit: (line: Buffer, offset: number) => boolean, chunk = CHUNK): Promise<void> {
  let position = before;
  // The bytes from `position` not visited yet; once a newline is found they end in one.
  let rest: Buffer = Buffer.alloc(0);
  let sawNewline = false;
  const buffer = Buffer.alloc(chunk);
  while (position > 0) {
    const length = Math.min(chunk, position);
    position -= length;
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    rest = Buffer.concat([buffer.subarray(0, bytesRead), rest]);
    if (!sawNewline) {
      const last = rest.lastIndexOf(NEWLINE);
      if (last === -1) {
        rest = Buffer.alloc(0);
        continue;
      }
      rest = rest.subarray(0, last + 1);
      sawNewline = true;
    }
    // `stop` is the newline that ends the line being cut; the newline before it starts it.
    let stop = rest.length - 1;
    while (stop > 0) {
      const cut = rest.lastIndexOf(NEWLINE, stop - 1);
      if (cut === -1) break;
      if (stop > cut + 1 && !visit(rest.subarray(cut + 1, stop), position + cut + 1)) return;
      stop = cut;
    }
    rest = Buffer.from(rest.subarray(0, stop + 1));
  }
  // The file's first line has no newline before it.
  if (sawNewline && rest.length > 1) visit(rest.subarray(0, rest.length - 1), 0);
}

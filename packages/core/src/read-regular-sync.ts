import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * What {@link readRegularSync} found: the bytes; nothing at the name; a file it refused to read
 * (a symlink not followed, not a regular file, too large); or the system's error (`why`: its code).
 */
export type RegularRead =
  | { readonly kind: 'read'; readonly bytes: Buffer }
  | { readonly kind: 'missing' }
  | { readonly kind: 'refused'; readonly why: string }
  | { readonly kind: 'error'; readonly why: string };

/**
 * Reads a small regular file whole, synchronously, never waiting on what is not one. `file` is a
 * path (text or bytes), opened once without waiting (`O_NONBLOCK`, `O_NOCTTY`) and, unless `follow`, without
 * following a symlink at its name; or an open descriptor, read from its start. What was opened is
 * judged by `fstat`: a FIFO, a socket or a device is refused, never read. A path judged by `lstat`
 * and then read by path could be a FIFO by the read, whose `open` blocks until a writer comes: on
 * the daemon's thread, for good. More than `maxBytes` is refused.
 */
export function readRegularSync(file: string | Buffer | number, options: { readonly maxBytes: number; readonly follow?: boolean }): RegularRead {
  let fd: number;
  if (typeof file === 'number') fd = file;
  else {
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | (options.follow ? 0 : constants.O_NOFOLLOW));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { kind: 'missing' };
      if (code === 'ELOOP' && !options.follow) return { kind: 'refused', why: 'it is a symlink' };
      return { kind: 'error', why: code ?? (error as Error).message };
    }
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: 'refused', why: 'it is not a regular file' };
    if (stat.size > options.maxBytes) return { kind: 'refused', why: `it is larger than ${options.maxBytes} bytes` };
    // to its end, one byte past what fstat saw (so past maxBytes is seen, a file that grew meanwhile included)
    let bytes = Buffer.alloc(Math.min(stat.size, options.maxBytes) + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, bytes, got, bytes.length - got, got);
      if (n === 0) break;
      got += n;
      if (got > options.maxBytes) break;
      if (got === bytes.length) bytes = Buffer.concat([bytes, Buffer.alloc(Math.min(bytes.length, options.maxBytes + 1 - got))]);
    }
    if (got > options.maxBytes) return { kind: 'refused', why: `it is larger than ${options.maxBytes} bytes` };
    return { kind: 'read', bytes: bytes.subarray(0, got) };
  } catch (error) {
    return { kind: 'error', why: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
  } finally {
    if (typeof file !== 'number') closeSync(fd);
  }
}

import { isUtf8 } from 'node:buffer';

/*
 * File names on Linux are bytes; the policy's rules and bubblewrap's arguments are strings. A name
 * that is valid UTF-8 is decoded as such. One that is not keeps its ASCII bytes and maps every
 * other byte b to the lone surrogate U+DC00+b (as Python's `surrogateescape` does): UTF-8 text
 * never holds a lone surrogate, so the mapping is reversible, slashes and ASCII stay where the
 * rules expect them (`.env` in a directory named `\xff` still matches `.env*`), and
 * {@link encodePath} gives the exact bytes back for the kernel.
 */

const RAW = /[\udc80-\udcff]/;

/** A file name's bytes as a string the rules can match; reversible with {@link encodePath}. */
export function decodeName(name: Buffer): string {
  if (isUtf8(name)) return name.toString('utf8');
  let out = '';
  for (const b of name) out += b < 0x80 ? String.fromCharCode(b) : String.fromCharCode(0xdc00 + b);
  return out;
}

/**
 * A host file's text (a git config, an `.envrc`, a `.git` file's `gitdir:`): UTF-8 as is;
 * otherwise decoded as {@link decodeName} decodes a name, every byte past ASCII as its lone
 * surrogate, so no byte is lost. A path taken from it is named as the walks name it by
 * {@link canonicalHostPath}: decoded as U+FFFD, `hk\xff` named no file, and a command's hook
 * there landed (found by an attack, h115).
 */
export function decodeHostText(bytes: Buffer): string {
  return decodeName(bytes);
}

/** A path's bytes named as the walks name it: each name by {@link decodeName}, so a name that is UTF-8 reads as text whatever the others are. */
export function decodeHostPath(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  const names: string[] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x2f) continue;
    names.push(decodeName(bytes.subarray(start, i)));
    start = i + 1;
  }
  return names.join('/');
}

/** A path built from {@link decodeHostText} text, named as the walks name it (see {@link decodeHostPath}); one without raw bytes as it is. */
export function canonicalHostPath(path: string): string {
  return hasRawBytes(path) ? decodeHostPath(encodePath(path)) : path;
}

/** A path as the kernel takes it: its bytes when it holds raw ones, the text otherwise. */
export function hostPathArg(path: string): string | Buffer {
  return hasRawBytes(path) ? encodePath(path) : path;
}

/** Whether a path holds bytes that are not UTF-8 (it must then reach the kernel through {@link encodePath}). */
export function hasRawBytes(path: string): boolean {
  return RAW.test(path);
}

/** The exact bytes of a path built from {@link decodeName} names. */
export function encodePath(path: string): Buffer {
  if (!hasRawBytes(path)) return Buffer.from(path, 'utf8');
  const parts: Buffer[] = [];
  let text = '';
  for (const ch of path) {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && c >= 0xdc80 && c <= 0xdcff) {
      if (text) parts.push(Buffer.from(text, 'utf8'));
      text = '';
      parts.push(Buffer.of(c - 0xdc00));
    } else text += ch;
  }
  if (text) parts.push(Buffer.from(text, 'utf8'));
  return Buffer.concat(parts);
}

/** A path for messages: raw bytes shown as `\xNN`. */
export function printablePath(path: string): string {
  return path.replace(/[\udc80-\udcff]/g, (c) => `\\x${(c.charCodeAt(0) - 0xdc00).toString(16)}`);
}

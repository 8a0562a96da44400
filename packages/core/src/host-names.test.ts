import { describe, expect, it } from 'vitest';
import { canonicalHostPath, decodeHostPath, decodeHostText, decodeName, encodePath, hasRawBytes, printablePath } from './host-names.js';

describe('byte names', () => {
  it.each([
    ['ASCII', Buffer.from('.env.local'), false],
    ['UTF-8', Buffer.from('café-ñ'), false],
    ['a lone 0xff', Buffer.of(0xff), true],
    ['Latin-1 é among ASCII', Buffer.from([0x61, 0xe9, 0x2e, 0x65, 0x6e, 0x76]), true],
    ['a truncated UTF-8 sequence', Buffer.from([0x2e, 0xe2, 0x82]), true],
    ['an encoded surrogate (not UTF-8)', Buffer.from([0xed, 0xb2, 0x80]), true],
  ])('%s survives the round trip and keeps its ASCII', (_, name, raw) => {
    const s = decodeName(name);
    expect(hasRawBytes(s)).toBe(raw);
    expect(encodePath(`/ws/${s}/x`).equals(Buffer.concat([Buffer.from('/ws/'), name, Buffer.from('/x')]))).toBe(true);
    for (const b of name) if (b < 0x80) expect(s).toContain(String.fromCharCode(b));
  });

  it('shows raw bytes as \\xNN in messages', () => {
    expect(printablePath(`/ws/${decodeName(Buffer.of(0xff, 0x41))}`)).toBe('/ws/\\xffA');
  });

  // a path read from a host file's bytes (a config's value, a link's target) is named as the walks
  // name each entry: a name that is UTF-8 as text, one that is not by its bytes (h115: read as
  // U+FFFD, `hk\xff` named no file and a command's hook there landed)
  it.each([
    ['a name not UTF-8 beside names that are', Buffer.from([...Buffer.from('/ws/café/hk'), 0xff, ...Buffer.from('/x')])],
    ['a name mixing UTF-8 and a stray byte', Buffer.from([...Buffer.from('/ws/é'), 0xff, ...Buffer.from('/ñ')])],
    ['all UTF-8', Buffer.from('/ws/café/x')],
  ])('%s: each name decoded as the walks decode it, the bytes kept', (_, bytes) => {
    const names = bytes.toString('latin1').split('/').map((n) => decodeName(Buffer.from(n, 'latin1')));
    expect(decodeHostPath(bytes)).toBe(names.join('/'));
    expect(encodePath(decodeHostPath(bytes)).equals(bytes)).toBe(true);
    // a text decoded whole loses no byte, and a path taken from it comes back named the same
    expect(encodePath(decodeHostText(bytes)).equals(bytes)).toBe(true);
    expect(canonicalHostPath(decodeHostText(bytes))).toBe(decodeHostPath(bytes));
  });
});

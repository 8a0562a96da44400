import { describe, expect, it } from 'vitest';
import { decodeName, encodePath, hasRawBytes, printablePath } from './host-names.js';

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
});

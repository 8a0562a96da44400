import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BoundedOutput } from './bounded-output.js';

describe('BoundedOutput: the first `limit` bytes, and whether any was dropped', () => {
  it.each([
    { name: 'nothing written', limit: 4, chunks: [], text: '', truncated: false },
    { name: 'under the limit', limit: 4, chunks: ['ab'], text: 'ab', truncated: false },
    { name: 'exactly the limit, in two chunks', limit: 4, chunks: ['ab', 'cd'], text: 'abcd', truncated: false },
    { name: 'one byte over, in one chunk', limit: 4, chunks: ['abcde'], text: 'abcd', truncated: true },
    { name: 'a chunk that straddles the limit', limit: 4, chunks: ['abc', 'def'], text: 'abcd', truncated: true },
    { name: 'a chunk after the limit is full', limit: 4, chunks: ['abcd', 'e'], text: 'abcd', truncated: true },
    { name: 'an empty chunk after the limit is full drops nothing', limit: 4, chunks: ['abcd', ''], text: 'abcd', truncated: false },
    { name: 'a limit of zero keeps nothing', limit: 0, chunks: ['a'], text: '', truncated: true },
    { name: 'a UTF-8 character cut at the limit', limit: 2, chunks: ['aé'], text: 'a\uFFFD', truncated: true },
  ])('$name', ({ limit, chunks, text, truncated }) => {
    const output = new BoundedOutput(limit);
    for (const chunk of chunks) output.push(Buffer.from(chunk, 'utf8'));
    expect(output.text()).toBe(text);
    expect(output.truncated).toBe(truncated);
    expect(output.size).toBe(Math.min(limit, Buffer.byteLength(chunks.join(''), 'utf8')));
  });

  it('keeps what an attached stream emits, and ignores a missing stream', () => {
    const stream = new EventEmitter();
    const output = new BoundedOutput(3);
    output.attach(stream);
    output.attach(undefined);
    stream.emit('data', Buffer.from('ab'));
    stream.emit('data', Buffer.from('cd'));
    expect([output.text(), output.truncated]).toEqual(['abc', true]);
  });
});

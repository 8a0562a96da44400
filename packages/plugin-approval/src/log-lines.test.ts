import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readLinesBackward, readLinesForward } from './log-lines.js';

const dir = await mkdtemp(join(tmpdir(), 'aalis-lines-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function both(text: string, chunk: number, from = 0) {
  const file = join(dir, 'log');
  await writeFile(file, text);
  const handle = await open(file, 'r');
  try {
    const forward: string[] = [];
    const read = await readLinesForward(handle, from, (l) => forward.push(l.toString()), chunk);
    const backward: [string, number][] = [];
    await readLinesBackward(handle, text.length, (l, o) => {
        backward.push([l.toString(), o]);
        return true;
      },
      chunk,
    );
    return { forward, read, backward };
  } finally {
    await handle.close();
  }
}

describe('reading log lines a chunk at a time', () => {
  const cases: [string, string, string[], boolean][] = [
    ['empty', '', [], false],
    ['one line', 'abc\n', ['abc'], false],
    ['lines and a torn tail', 'a\nbb\nccc\ndd', ['a', 'bb', 'ccc'], true],
    ['a line longer than a chunk', `${'x'.repeat(20)}\ny\n`, ['x'.repeat(20), 'y'], false],
    ['blank lines', 'a\n\nb\n', ['a', '', 'b'], false],
    ['only torn', 'abc', [], true],
  ];
  for (const chunk of [1, 3, 7, 1024]) {
    for (const [name, text, lines, torn] of cases) {
      it(`${name} (chunk ${chunk})`, async () => {
        const { forward, read, backward } = await both(text, chunk);
        expect(forward).toEqual(lines);
        expect(read.torn).toBe(torn);
        expect(read.end).toBe(lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
        const nonEmpty = lines.filter((l) => l !== '');
        expect(backward.map(([l]) => l)).toEqual(nonEmpty.reverse());
        for (const [line, offset] of backward) expect(text.slice(offset, offset + line.length)).toBe(line);
      });
    }
  }

  it('forward reads start at an offset', async () => {
    const { forward } = await both('a\nbb\nccc\n', 2, 2);
    expect(forward).toEqual(['bb', 'ccc']);
  });
});

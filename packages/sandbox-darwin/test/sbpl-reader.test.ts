import { describe, expect, it } from 'vitest';
import { filtersOf, heads, readSbpl, SbplReadError } from './sbpl-reader.js';

// The reader the profile tests rely on must itself refuse what is not well formed.
describe('readSbpl', () => {
  it('reads forms, strings and comments', () => {
    const forms = readSbpl('(version 1)\n;; a comment (with "quotes"\n(deny file-write* (subpath "/a \\"b\\"\\\\") (remote ip "localhost:22"))\n');
    expect(forms.map(heads)).toEqual([['version', '1'], ['deny', 'file-write*']]);
    expect(filtersOf(forms[1]!)).toEqual([
      { kind: 'subpath', value: '/a "b"\\' },
      { kind: 'remote ip', value: 'localhost:22' },
    ]);
  });

  it.each([
    ['(allow', /unclosed/],
    ['(allow))', /unbalanced/],
    ['(literal "abc)', /unterminated/],
    ['(literal "a\\qb")', /unknown escape/],
    ['(literal "a\nb")', /raw control character/],
    ['(literal "a\u0000b")', /raw control character/],
    ['(allow file-read* {x})', /unexpected symbol/],
  ])('refuses %j', (text, problem) => {
    expect(() => readSbpl(text)).toThrow(SbplReadError);
    expect(() => readSbpl(text)).toThrow(problem);
  });
});

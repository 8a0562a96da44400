import { describe, expect, it } from 'vitest';
import { readSbpl } from '../test/sbpl-reader.js';
import { DarwinProfileError } from './darwin-profile-error.js';
import { sbplString } from './sbpl-string.js';

describe('sbplString', () => {
  it.each([
    ['/plain/path', '"/plain/path"'],
    ['a"b', '"a\\"b"'],
    ['a\\b', '"a\\\\b"'],
    ['a\\', '"a\\\\"'],
    ['\\"', '"\\\\\\""'],
    ['a\nb', '"a\\nb"'],
    ['a\tb\rc', '"a\\tb\\rc"'],
    ['(x)', '"(x)"'],
    ['café 日本', '"café 日本"'],
  ])('%j is written as %s', (text, literal) => {
    expect(sbplString(text, 'test')).toBe(literal);
  });

  it.each([
    ['a\u0000b', /U\+0000/],
    ['a\u0001b', /U\+0001/],
    ['a\u001bb', /U\+001B/],
    ['a\u007fb', /U\+007F/],
    ['a\ud800b', /surrogate/],
  ])('refuses %j', (text, problem) => {
    expect(() => sbplString(text, 'write[0]')).toThrow(DarwinProfileError);
    expect(() => sbplString(text, 'write[0]')).toThrow(problem);
    expect(() => sbplString(text, 'write[0]')).toThrow(/write\[0\].*Fix: /);
  });

  it('reads back as exactly the text it was given', () => {
    for (const text of ['"', '\\', '\\"', '")(allow default)(', 'x\n(allow default)', '日本\\"\n']) {
      const forms = readSbpl(sbplString(text, 'test'));
      expect(forms).toEqual([{ type: 'string', value: text }]);
    }
  });
});

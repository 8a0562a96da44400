import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DarwinProfileError } from './darwin-profile-error.js';
import { literalRegex, translatePattern } from './sbpl-regex.js';

describe('translatePattern', () => {
  it.each([
    ['^/a$', '^/[Aa]$'],
    ['(^|/)\\.env[^/]*$', '(^|/)\\.[Ee][Nn][Vv][^/]*$'],
    ['\\.(pem|key)$', '\\.([Pp][Ee][Mm]|[Kk][Ee][Yy])$'],
    ['(?:x|y)+', '([Xx]|[Yy])+'],
    ['a.b', '[Aa][^\n\r][Bb]'],
    ['[a-c_]', '[A-C_a-c]'],
    ['[^a]', '[^Aa]'],
    ['[\\]a]', '[]Aa]'],
    ['[-x]', '[Xx-]'],
    ['[\\^]', '\\^'],
    ['[a^]', '[Aa^]'],
    ['[\\[\\]]', '[][]'],
    ['\\d{2}', '[0-9][0-9]'],
    ['x{1,3}', '[Xx][Xx]?[Xx]?'],
    ['x{2,}', '[Xx][Xx][Xx]*'],
    ['x*?', '[Xx]*'],
    ['\\w+', '[0-9A-Z_a-z]+'],
    ['é+', '(é|É)+'],
    ['日+', '(日)+'],
    ['\\/\\-\\.', '/-\\.'],
    ['a{', null],
  ])('%s becomes %j', (pattern, sbpl) => {
    if (sbpl === null) expect(() => translatePattern(pattern, 'p')).toThrow(DarwinProfileError);
    else expect(translatePattern(pattern, 'p')).toBe(sbpl);
  });

  it.each([
    ['(?=x)', /lookaround/],
    ['(?<n>x)', /lookaround/],
    ['(x)\\1', /escape "\\1"/],
    ['\\bx', /escape "\\b"/],
    ['\\s', /escape "\\s"/],
    ['\\u0041', /escape "\\u"/],
    ['[é]', /non-ASCII/],
    ['[\\\\]', /backslash inside a character class/],
    ['a|', /empty alternative/],
    ['()', /empty/],
    ['[]a]', /empty character class/],
    ['^*', /nothing to repeat|not a valid|anchor/],
    ['x{40}', /more than 32/],
    ['', /empty/],
    ['(', /not a valid/],
    ['[\\s]', /escape "\\s" inside/],
  ])('refuses %s', (pattern, problem) => {
    expect(() => translatePattern(pattern, 'writeDeny[1]')).toThrow(problem);
    expect(() => translatePattern(pattern, 'writeDeny[1]')).toThrow(/writeDeny\[1\].*Fix: /);
  });

  // The translated text is also a JavaScript regex (the SBPL dialect is a subset), so the case-
  // folded translation run without flags must agree with the original run with `i` on every path.
  const alphabet = fc.constantFrom('/', 'a', 'A', 'b', 'E', 'e', '.', 'n', 'v', 'V', '_', '-', '1', 'é', 'É', 'x');
  const paths = fc.array(alphabet, { maxLength: 14 }).map((chars) => chars.join(''));
  it.each([
    '(^|/)\\.env[^/]*(/|$)',
    '(^|/)\\.env\\.(example|sample)$',
    '^/a(/b)?/[^/]+\\.e$',
    '(a|b){1,3}\\.v+$',
    '[a-e_]+/x?$',
    'é\\d*',
    '[^/]e.',
    '^/(ab|ba)*$',
  ])('%s matches the same paths after translation', (pattern) => {
    const original = new RegExp(pattern, 'i');
    const translated = new RegExp(translatePattern(pattern, 'p'));
    fc.assert(fc.property(paths, (path) => original.test(path) === translated.test(path)), { numRuns: 2000 });
  });
});

describe('literalRegex', () => {
  it('matches exactly its text, without case, whatever the characters', () => {
    const text = '/Users/Ana/a.b(c)[d]{e}*+?^$|\\f é';
    const regex = new RegExp(`^${literalRegex(text)}$`);
    expect(regex.test(text)).toBe(true);
    expect(regex.test(text.toUpperCase())).toBe(true);
    expect(regex.test(text.replace('.', 'x'))).toBe(false);
    expect(regex.test(`${text}x`)).toBe(false);
  });
});

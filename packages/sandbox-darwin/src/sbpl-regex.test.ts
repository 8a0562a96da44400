import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DarwinProfileError } from './darwin-profile-error.js';
import { literalRegex, translatePattern } from './sbpl-regex.js';

describe('translatePattern', () => {
  it.each([
    ['^/a$', '^/[Aa]$'],
    ['^.*/\\.env[^/]*(?:/.*)?$', '^.*/\\.[Ee][Nn][Vv][^/]*(/.*)?$'],
    ['^.*\\.(?:pem|key)$', '^.*\\.([Pp][Ee][Mm]|[Kk][Ee][Yy])$'],
    ['(?:x|y)+', '^([Xx]|[Yy])+$'],
    ['a.b', '^[Aa].[Bb]$'],
    ['[a-c_]', '^[A-C_a-c]$'],
    ['[^a]', '^[^Aa]$'],
    ['[\\]a]', '^[]Aa]$'],
    ['[-x]', '^[Xx-]$'],
    ['[\\^]', '^\\^$'],
    ['[a^]', '^[Aa^]$'],
    ['[\\[\\]]', '^[][]$'],
    ['x{1,3}', '^[Xx][Xx]?[Xx]?$'],
    ['x{2,}', '^[Xx][Xx][Xx]*$'],
    ['é+', '^(é|É)+$'],
    ['日+', '^(日)+$'],
    ['\\/\\.', '^/\\.$'],
    ['a|b', '^([Aa]|[Bb])$'],
    ['^a|b$', '^(^[Aa]|[Bb]$)$'],
    ['a\\$', '^[Aa]\\$$'],
    ['(^|/)x', '^(^|/)[Xx]$'],
  ])('%s becomes %j', (pattern, sbpl) => {
    expect(translatePattern(pattern, 'p')).toBe(sbpl);
  });

  it.each([
    ['(?=x)', /lookaround/],
    ['(?<n>x)', /lookaround/],
    ['(x)\\1', /escape/],
    ['\\bx', /escape/],
    ['\\s', /escape/],
    ['\\d', /escape/],
    ['x*?', /lazy/],
    ['[é]', /non-ASCII/],
    ['[\\\\]', /backslash inside a character class/],
    ['a|', /empty/],
    ['()', /empty/],
    ['[]a]', /empty character class/],
    ['^*', /nothing to repeat/],
    ['x{40}', /more than 32/],
    ['', /empty/],
    ['(', /not a valid|not closed|unclosed/],
    ['a{', /quantifier/],
  ])('refuses %s', (pattern, problem) => {
    expect(() => translatePattern(pattern, 'writeDeny[1]')).toThrow(DarwinProfileError);
    expect(() => translatePattern(pattern, 'writeDeny[1]')).toThrow(problem);
    expect(() => translatePattern(pattern, 'writeDeny[1]')).toThrow(/writeDeny\[1\].*Fix: /);
  });

  // The translated text is also a JavaScript regex (the SBPL dialect is a subset), so the
  // translation run as JavaScript must agree with api-reach's matching (whole path, no case, `.`
  // across newlines) on every path. Paths are built from tokens the patterns care about, so both
  // verdicts occur; the test also asserts they do, or it would prove nothing.
  const tokens = ['/', '/a', '/B', '.env', '.ENV', '.env.example', '.Env.Sample', '.envrc', 'a', 'A', 'b', 'B', '.e', 'x.e', 'ab', 'ba', 'é', 'É', '1', '.v', 'v', 'e', 'E', '\n', '-'];
  const paths = fc.array(fc.constantFrom(...tokens), { maxLength: 6 }).map((parts) => parts.join(''));
  it.each([
    '^.*/\\.env[^/]*(?:/.*)?$',
    '(^|/)\\.env\\.(example|sample)$',
    '^/a(/b)?/[^/]+\\.e$',
    '.*(a|b){1,3}\\.v+',
    '[a-e_]+/x?',
    'é[0-9]*',
    '.*[^/]e.',
    '^/(ab|ba)*$',
    'a|/b.*|e$',
  ])('%s matches the same paths after translation', (pattern) => {
    const original = new RegExp(`^(?:${pattern})$`, 'isu');
    const translated = new RegExp(translatePattern(pattern, 'p'), 's');
    const sample = fc.sample(paths, { numRuns: 3000, seed: 42 });
    const disagreements = sample.filter((path) => original.test(path) !== translated.test(path));
    expect(disagreements).toEqual([]);
    const hits = sample.filter((path) => original.test(path)).length;
    expect(hits).toBeGreaterThan(0);
    expect(hits).toBeLessThan(sample.length);
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

import { describe, expect, it } from 'vitest';
import { ReachInputError } from './errors.js';
import fc from 'fast-check';
import { checkPattern, requiredLiteral, validatePattern } from './pattern.js';

describe('checkPattern', () => {
  it.each([
    '^.*/\\.git$',
    '^/a/b(/.*)?$',
    '^.*/\\.env[^/]*(/.*)?$',
    '^(?:a|b)+c{2}d{1,}e{1,3}$',
    '[a-z\\-\\]]',
    '^C:/Users/x\\.y$',
    'a?b*c+',
    '^/tmp/\\(x\\)\\[y\\]\\{z\\}\\|\\$\\^\\.\\*\\+\\?\\\\$',
  ])('accepts %s', (pattern) => {
    expect(checkPattern(pattern)).toBeUndefined();
    expect(() => validatePattern(pattern)).not.toThrow();
  });

  it.each([
    ['', 'empty'],
    ['\\d+', 'escape \\d'],
    ['a\\b', 'escape \\b'],
    ['(a)\\1', 'escape \\1'],
    ['\\u0041', 'escape \\u'],
    ['(?=a)', 'lookarounds'],
    ['(?!a)', 'lookarounds'],
    ['(?<=a)b', 'lookarounds'],
    ['(?<n>a)', 'named groups'],
    ['a*?', 'lazy'],
    ['a{2}?', 'lazy'],
    ['a**', 'repeats a quantifier'],
    ['*a', 'nothing to repeat'],
    ['a{x}', 'does not start a quantifier'],
    ['a{3,1}', 'wrong way round'],
    ['[]', 'empty character class'],
    ['[^]', 'empty character class'],
    ['[abc', 'not closed'],
    ['a]', 'unmatched'],
    ['(a', 'not a valid regular expression'],
    ['a\\', 'trailing backslash'],
  ])('refuses %s (%s)', (pattern, why) => {
    expect(checkPattern(pattern)).toContain(why);
    expect(() => validatePattern(pattern)).toThrow(ReachInputError);
    expect(() => validatePattern(pattern)).toThrow(/patterns may use only anchors/);
  });
});

describe('requiredLiteral', () => {
  it.each([
    ['^.*/\\.git$', '/.git'],
    ['^/a/b(/.*)?$', '/a/b'],
    ['^(?:/x|/y)/(?:.*/)?node_modules(?:/.*)?$', 'node_modules'],
    ['^.*/\\.env[^/]*(?:/.*)?$', '/.env'],
    ['^/ab?cd$', '/a'], // b is optional: '/a' and 'cd' are as long, the first is kept
    ['^/abc*def$', '/ab'],
    ['^/a+bcd$', 'bcd'],
    ['^/ab{2}cdef$', 'cdef'],
    ['^a\\{b$', 'a{b'],
    ['^/x[abc]yzw$', 'yzw'],
    ['^/x[a\\]]yzw$', 'yzw'],
    ['^.*/a|^/b$', ''], // two top-level alternatives: none is sure
    ['^(?:a|b)$', ''],
    ['.*', ''],
    ['^(abc)+$', ''],
    ['^/a\u{1F600}?bcd$', 'bcd'], // the quantifier takes the whole code point, both its code units
    ['^/\u{1F600}bc$', '/\u{1F600}bc'],
    ['^/abc', '/abc'], // the last atom counts without a `$` after it (it did not before the tokens)
    ['^a\\$', 'a$'],
    ['^/ab\u{1F600}', '/ab\u{1F600}'],
  ])('%s -> %j', (pattern, literal) => {
    expect(checkPattern(pattern)).toBeUndefined();
    expect(requiredLiteral(pattern)).toBe(literal);
  });

  it('every path a pattern matches contains its literal', () => {
    const atom = fc.constantFrom('a', 'b', '/', '\\.', '\\$', '.', '[ab]', '[^/]', '(?:a|/b)', '(?:ab)', 'node_modules', '\\{', 'x', '\u{1F600}');
    const quant = fc.constantFrom('', '', '', '?', '*', '+', '{2}', '{1,}', '{0,2}');
    // anchored or not at either end: a pattern's last atom is its last token where no `$` follows
    const pattern = fc
      .tuple(fc.boolean(), fc.array(fc.tuple(atom, quant), { minLength: 1, maxLength: 8 }), fc.boolean())
      .map(([start, parts, end]) => `${start ? '^' : ''}${parts.map(([a, q]) => a + q).join('')}${end ? '$' : ''}`);
    const path = fc.array(fc.constantFrom('a', 'b', '/', '.', 'x', 'node_modules', '{', '$', 'ab', '\u{1F600}'), { maxLength: 12 }).map((p) => p.join(''));
    fc.assert(
      fc.property(pattern, fc.array(path, { minLength: 20, maxLength: 20 }), (p, paths) => {
        if (checkPattern(p) !== undefined) return;
        const literal = requiredLiteral(p);
        const regex = new RegExp(p, 'su');
        for (const candidate of paths) if (regex.test(candidate)) expect(candidate).toContain(literal);
      }),
      { numRuns: 3000 },
    );
  });
});

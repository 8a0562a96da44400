import { describe, expect, it } from 'vitest';
import { ReachInputError } from './errors.js';
import { checkPattern, validatePattern } from './pattern.js';

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

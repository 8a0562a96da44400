import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReachInputError } from './errors.js';
import { patternBody } from './node-modules-exception.js';
import { patternTokens } from './pattern-tokens.js';

/** Each token as `kind:text`, an atom's literal after `=` when it has one. */
const shown = (pattern: string) => patternTokens(pattern).map((t) => `${t.kind}:${t.text}${t.kind === 'atom' && t.literal !== undefined ? `=${t.literal}` : ''}`);

describe('patternTokens', () => {
  it.each([
    ['^/a$', ['anchor:^', 'atom:/=/', 'atom:a=a', 'anchor:$']],
    ['\\.\\$\\\\', ['atom:\\.=.', 'atom:\\$=$', 'atom:\\\\=\\']],
    ['[a\\]b]c', ['atom:[a\\]b]', 'atom:c=c']],
    ['[^/]*', ['atom:[^/]', 'quantifier:*']],
    ['(?:a|b)+', ['open:(?:', 'atom:a=a', 'alternation:|', 'atom:b=b', 'close:)', 'quantifier:+']],
    ['(x){2,3}y{4,}z{5}', ['open:(', 'atom:x=x', 'close:)', 'quantifier:{2,3}', 'atom:y=y', 'quantifier:{4,}', 'atom:z=z', 'quantifier:{5}']],
    ['.?', ['atom:.', 'quantifier:?']],
    ['\u{1F600}?', ['atom:\u{1F600}=\u{1F600}', 'quantifier:?']],
    // not valid patterns (checkPattern refuses them), read on all the same
    ['a{x}', ['atom:a=a', 'atom:{={', 'atom:x=x', 'atom:}=}']],
    ['\\d', ['atom:\\d']],
    ['[ab', ['atom:[ab']],
    ['a\\', ['atom:a=a', 'atom:\\=\\']],
    ['\uD800a', ['atom:\uD800=\uD800', 'atom:a=a']],
  ])('%s', (pattern, tokens) => {
    expect(shown(pattern)).toEqual(tokens);
  });

  it('never throws, and its tokens are the whole text in order', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '/', '\\', '[', ']', '^', '$', '(', ')', '?', ':', '|', '*', '+', '{', '}', ',', '1', '.', '\uD83D', '\uDE00') }), (pattern) => {
        const tokens = patternTokens(pattern);
        expect(tokens.map((t) => t.text).join('')).toBe(pattern);
        expect(tokens.map((t) => t.start)).toEqual(tokens.map((_, i) => tokens.slice(0, i).reduce((at, t) => at + t.text.length, 0)));
      }),
      { numRuns: 5000 },
    );
  });
});

// patternBody reads a pattern's anchors from its tokens (node-modules-exception.ts)
describe('patternBody', () => {
  it.each([
    ['^/a$', '(?:/a)'],
    ['^/a$|^/b', '(?:/a|/b)'],
    ['/a\\$', '(?:/a\\$)'], // an escaped `$` is a character
    ['^/a\\\\$', '(?:/a\\\\)'], // an escaped backslash, then the anchor
    ['^$', '(?:)'],
    ['^/a[$^]b$', '(?:/a[$^]b)'], // in a class both are characters
  ])('%s -> %s', (pattern, body) => {
    expect(patternBody(pattern)).toBe(body);
  });

  it.each(['^/a^b$', '^/a$b', '^(^/a)$', '^/a$$'])('refuses the inner anchor of %s', (pattern) => {
    expect(() => patternBody(pattern)).toThrow(ReachInputError);
    expect(() => patternBody(pattern)).toThrow(/has an anchor \(\^ or \$\) inside it/);
  });
});

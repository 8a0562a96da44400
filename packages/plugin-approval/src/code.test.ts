import { describe, expect, it } from 'vitest';
import { CODE_ALPHABET, parseCode, randomCode } from './code.js';

describe('approval codes', () => {
  it('leave out the characters people confuse', () => {
    for (const confusable of ['0', 'O', '1', 'I', 'L', 'U', 'V']) expect(CODE_ALPHABET).not.toContain(confusable);
    expect(new Set(CODE_ALPHABET).size).toBe(CODE_ALPHABET.length);
  });

  it('are drawn from the alphabet at the asked length, and differ', () => {
    const codes = Array.from({ length: 2000 }, () => randomCode(6));
    for (const code of codes) expect(code).toMatch(new RegExp(`^[${CODE_ALPHABET}]{6}$`));
    expect(new Set(codes).size).toBeGreaterThan(1990);
  });

  it.each([
    ['ab3k7m', 'AB3K7M'],
    [' ab3-k7m ', 'AB3K7M'],
    ['AB3 K7M', 'AB3K7M'],
  ])('reads %j as %s', (typed, code) => {
    expect(parseCode(typed)).toEqual({ ok: true, code });
  });

  it.each([
    ['', /no approval code was given/],
    ['AB0K', /'0' never appear in codes/],
    ['hello!', /'L', 'O', '!' never appear/],
  ])('refuses %j and says why', (typed, message) => {
    const parsed = parseCode(typed);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });
});

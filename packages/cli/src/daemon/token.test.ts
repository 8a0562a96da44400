import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bearerMatches, cookieMatches, isLoopback, newToken } from './token.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['192.168.1.2', false],
    ['::ffff:10.0.0.1', false],
    ['fe80::1', false],
    ['127.0.0.1.evil', false],
    [undefined, false],
  ])('%s is loopback: %s', (address, expected) => {
    expect(isLoopback(address)).toBe(expected);
  });
});

describe('the token', () => {
  const token = newToken();
  it('is new each time and long', () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(token);
  });
  it.each([
    [{ authorization: `Bearer ${token}` }, true],
    [{ authorization: `bearer ${token}` }, true],
    [{ authorization: `Bearer ${token}x` }, false],
    [{ authorization: `Basic ${token}` }, false],
    [{ authorization: 'Bearer' }, false],
    [{}, false],
  ])('header %j matches: %s', (headers, expected) => {
    expect(bearerMatches(request(headers), token)).toBe(expected);
  });
  it.each([
    [`aalis_token=${encodeURIComponent(token)}`, true],
    [`a=1; aalis_token=${token}; b=2`, true],
    [`aalis_token=${token}x`, false],
    [`other=${token}`, false],
  ])('cookie %s matches: %s', (cookie, expected) => {
    expect(cookieMatches(request({ cookie }), token)).toBe(expected);
  });
});

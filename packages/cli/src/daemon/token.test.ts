import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { POD_CAPABILITY_MS, PodCapabilities } from './pod-capability.js';
import { bearerMatches, isLoopback, newToken } from './token.js';

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
});

describe('pod capabilities', () => {
  it('open only while they live, and are not the token', () => {
    let now = 1_000;
    const caps = new PodCapabilities(() => now);
    const { capability, expiresAt } = caps.issue();
    expect(expiresAt).toBe(1_000 + POD_CAPABILITY_MS);
    expect(capability).toMatch(/^pod_[A-Za-z0-9_-]{43}$/);
    const bearer = (value: string) => request({ authorization: `Bearer ${value}` });
    expect(caps.matches(bearer(capability))).toBe(true);
    expect(caps.matches(bearer(`${capability}x`))).toBe(false);
    expect(caps.matches(request({ cookie: `aalis_token=${capability}` }))).toBe(false);
    now = expiresAt - 1;
    expect(caps.matches(bearer(capability))).toBe(true);
    now = expiresAt;
    expect(caps.matches(bearer(capability))).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { hostAllowed } from './host-header.js';

describe('hostAllowed', () => {
  it.each<[string | undefined, readonly string[], boolean]>([
    ['127.0.0.1:8787', [], true],
    ['localhost:8787', [], true],
    ['LOCALHOST:8787', [], true],
    ['[::1]:8787', [], true],
    ['192.168.1.20:8787', [], true],
    ['127.0.0.1', [], true],
    [undefined, [], true],
    // a rebound DNS name, with or without the port
    ['evil.example:8787', [], false],
    ['evil.example', [], false],
    ['localhost.evil.example:8787', [], false],
    ['127.0.0.1.nip.io:8787', [], false],
    ['', [], false],
    // a name the config lists (a reverse proxy's)
    ['aalis.internal:8787', ['aalis.internal'], true],
    ['AALIS.internal', ['aalis.internal'], true],
    ['other.internal', ['aalis.internal'], false],
  ])('%s with %j: %s', (host, allowed, ok) => {
    expect(hostAllowed(host, allowed)).toBe(ok);
  });
});

import { describe, expect, it } from 'vitest';
import { CONSOLE_CODE, CONSOLE_CODE_MS, ConsoleCodes, consoleOrigin, openSealedToken, sealToken } from './console-codes.js';

const TOKEN = 'the-daemons-token-0123456789abcdefghijklmnop';

describe('console codes', () => {
  it('a code opens the token once; the second claim and an unknown id get nothing', () => {
    const codes = new ConsoleCodes(TOKEN);
    const { code } = codes.issue();
    expect(code).toMatch(CONSOLE_CODE);
    const id = code.split('.')[0]!;
    const sealed = codes.claim(id);
    expect(sealed).toBeDefined();
    expect(JSON.stringify(sealed)).not.toContain(TOKEN);
    expect(openSealedToken(code, sealed!)).toBe(TOKEN);
    expect(codes.claim(id)).toBeUndefined();
    expect(codes.claim('A'.repeat(22))).toBeUndefined();
  });

  it('a code expires unclaimed after its time', () => {
    let now = 1_000;
    const codes = new ConsoleCodes(TOKEN, () => now);
    const { code, expiresAt } = codes.issue();
    expect(expiresAt).toBe(1_000 + CONSOLE_CODE_MS);
    now = expiresAt;
    expect(codes.claim(code.split('.')[0]!)).toBeUndefined();
  });

  it('keeps at most 16 unclaimed codes, dropping the oldest', () => {
    const codes = new ConsoleCodes(TOKEN);
    const issued = Array.from({ length: 17 }, () => codes.issue().code);
    expect(codes.claim(issued[0]!.split('.')[0]!)).toBeUndefined();
    expect(codes.claim(issued[16]!.split('.')[0]!)).toBeDefined();
  });

  // what a server in the daemon's stead could do with the id alone
  it('an answer sealed under another key, or for another id, does not open', () => {
    const codes = new ConsoleCodes(TOKEN);
    const { code } = codes.issue();
    const [id] = code.split('.') as [string, string];
    const forged = sealToken('an-impostors-token', Buffer.alloc(32, 7), id);
    expect(() => openSealedToken(code, forged)).toThrow();
    const other = codes.issue().code;
    const sealedForOther = codes.claim(other.split('.')[0]!)!;
    expect(() => openSealedToken(`${id}.${other.split('.')[1]}`, sealedForOther)).toThrow();
    expect(() => openSealedToken('not-a-code', sealedForOther)).toThrow(/not a console code/);
  });
});

// `--host localhost` printed http://localhost:P, which Chromium resolved to ::1 first, where
// another user's server got the whole address (found by an attack)
describe('the console origin is a loopback IP literal', () => {
  it.each([
    ['127.0.0.1', 'http://127.0.0.1:8787'],
    ['127.0.0.2', 'http://127.0.0.2:8787'],
    ['::1', 'http://[::1]:8787'],
    ['::ffff:127.0.0.1', 'http://127.0.0.1:8787'],
    ['0.0.0.0', 'http://127.0.0.1:8787'],
    ['::', 'http://[::1]:8787'],
    ['192.0.2.2', undefined],
    ['fe80::1', undefined],
    ['localhost', undefined],
  ])('%s', (address, origin) => {
    expect(consoleOrigin(address, 8787)).toBe(origin);
  });
});

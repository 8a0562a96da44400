import { describe, expect, it } from 'vitest';
import { type ClaimResult, CONSOLE_CODE, CONSOLE_CODE_MS, ConsoleCodes, consoleOrigin, openSealedToken, type SealedToken, sealSecret } from './console-codes.js';

const TOKEN = 'the-daemons-token-0123456789abcdefghijklmnop';

const idOf = (code: string) => code.split('.')[0]!;

/** The sealed answer of a claim that found its code (the test fails otherwise). */
function sealedOf(result: ClaimResult): { sealed: SealedToken; keep: boolean } {
  if (result.kind !== 'sealed') throw new Error(`expected a sealed secret, got ${JSON.stringify(result)}`);
  return result;
}

describe('console codes', () => {
  it('a code opens the token once; the second claim and an unknown id get nothing', () => {
    const codes = new ConsoleCodes(TOKEN);
    const { code } = codes.issue('console');
    expect(code).toMatch(CONSOLE_CODE);
    const { sealed, keep } = sealedOf(codes.claim('console', idOf(code)));
    expect(keep).toBe(true);
    expect(JSON.stringify(sealed)).not.toContain(TOKEN);
    expect(openSealedToken(code, sealed)).toBe(TOKEN);
    expect(codes.claim('console', idOf(code))).toEqual({ kind: 'none' });
    expect(codes.claim('console', 'A'.repeat(22))).toEqual({ kind: 'none' });
  });

  it('a code expires unclaimed after its time', () => {
    let now = 1_000;
    const codes = new ConsoleCodes(TOKEN, true, () => now);
    const { code, expiresAt } = codes.issue('console');
    expect(expiresAt).toBe(1_000 + CONSOLE_CODE_MS);
    now = expiresAt;
    expect(codes.claim('console', idOf(code))).toEqual({ kind: 'none' });
  });

  it('keeps at most 16 unclaimed codes of a page, dropping the oldest; pod codes never push out a console code', () => {
    const codes = new ConsoleCodes(TOKEN);
    const issued = Array.from({ length: 17 }, () => codes.issue('console').code);
    for (let i = 0; i < 40; i++) codes.issue('pod', `pod_${i}`);
    expect(codes.claim('console', idOf(issued[0]!))).toEqual({ kind: 'none' });
    expect(codes.claim('console', idOf(issued[1]!)).kind).toBe('sealed');
    expect(codes.claim('console', idOf(issued[16]!)).kind).toBe('sealed');
  });

  // found by an attack: a console address opened at /pod gave the pod's panel the owner's token
  it("a code is for one page: claimed on the other it is refused and stays live, and its answer opens only for its page", () => {
    const codes = new ConsoleCodes(TOKEN);
    const consoleCode = codes.issue('console').code;
    const podCode = codes.issue('pod', 'pod_capability').code;
    expect(codes.claim('pod', idOf(consoleCode))).toEqual({ kind: 'other', is: 'console' });
    expect(codes.claim('console', idOf(podCode))).toEqual({ kind: 'other', is: 'pod' });
    const pod = sealedOf(codes.claim('pod', idOf(podCode)));
    expect(openSealedToken(podCode, pod.sealed, 'pod')).toBe('pod_capability');
    expect(() => openSealedToken(podCode, pod.sealed, 'console')).toThrow();
    const own = sealedOf(codes.claim('console', idOf(consoleCode)));
    expect(() => openSealedToken(consoleCode, own.sealed, 'pod')).toThrow();
    expect(openSealedToken(consoleCode, own.sealed, 'console')).toBe(TOKEN);
  });

  it('a token fixed by AALIS_TOKEN is not for keeping (it outlives the daemon); a pod capability is', () => {
    const codes = new ConsoleCodes(TOKEN, false);
    expect(sealedOf(codes.claim('console', idOf(codes.issue('console').code))).keep).toBe(false);
    expect(sealedOf(codes.claim('pod', idOf(codes.issue('pod', 'pod_x').code))).keep).toBe(true);
  });

  // what a server in the daemon's stead could do with the id alone
  it('an answer sealed under another key, or for another id, does not open', () => {
    const codes = new ConsoleCodes(TOKEN);
    const { code } = codes.issue('console');
    const forged = sealSecret('an-impostors-token', Buffer.alloc(32, 7), 'console', idOf(code));
    expect(() => openSealedToken(code, forged)).toThrow();
    const other = codes.issue('console').code;
    const sealedForOther = sealedOf(codes.claim('console', idOf(other))).sealed;
    expect(() => openSealedToken(`${idOf(code)}.${other.split('.')[1]}`, sealedForOther)).toThrow();
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

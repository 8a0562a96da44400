import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DarwinProfileError } from './darwin-profile-error.js';
import { checkUserDirs, findUserDirs, grantsUserCaches } from './user-dirs.js';

describe('checkUserDirs', () => {
  it('spells the folders the way the kernel does', () => {
    expect(checkUserDirs({ temp: '/var/folders/x1/abc/T/', cache: '/private/var/folders/x1/abc/C' })).toEqual({
      temp: '/private/var/folders/x1/abc/T',
      cache: '/private/var/folders/x1/abc/C',
    });
  });

  it.each([
    ['the root', '/', 'temp'],
    ['all users', '/private/var/folders', 'temp'],
    ["the user's whole folder (0, C, T and more)", '/private/var/folders/x1/abc', 'temp'],
    ['a cache folder passed as temp', '/private/var/folders/x1/abc/C', 'temp'],
    ['a dot-dot walk', '/private/var/folders/x1/abc/T/../../..', 'temp'],
    ['relative', 'var/folders/x1/abc/T', 'temp'],
  ])('refuses %s', (_what, temp, key) => {
    const attempt = () => checkUserDirs({ temp, cache: '/private/var/folders/x1/abc/C' });
    expect(attempt).toThrow(DarwinProfileError);
    expect(attempt).toThrow(new RegExp(`userDirs\\.${key}`));
  });
});

describe('grantsUserCaches', () => {
  it.each([
    [['/Users/ana/src/app', '/Users/ana/Library/Caches'], true],
    [['/Users/ana/library/caches/'], true],
    [['/Users/ana/.aalis/tmp/s1'], false],
    [['/Users/ana/Library/Caches/x'], false],
    [['/Users/ana/src/app', '/Users/ana/Library/Caches/aalis-sandbox'], true],
  ])('%j → %s', (roots, expected) => expect(grantsUserCaches(roots)).toBe(expected));
});

describe('findUserDirs (a real process stands in for getconf)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aalis-getconf-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const fake = (name: string, script: string) => {
    const path = join(dir, name);
    writeFileSync(path, `#!/bin/sh\n${script}\n`);
    chmodSync(path, 0o755);
    return path;
  };

  it.each([
    ['prints a folder that is not a per-user folder', `echo ${tmpdir()}`],
    ['prints /', 'echo /'],
    ['prints nothing', 'exit 0'],
    ['fails', 'exit 1'],
  ])('grants nothing when getconf %s', async (name, script) => {
    expect(await findUserDirs(fake(name.replace(/\W/g, '-'), script))).toBeUndefined();
  });

  it('grants nothing when getconf is missing', async () => {
    expect(await findUserDirs(join(dir, 'no-getconf'))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { pathIsUnder } from './path.js';

describe('pathIsUnder', () => {
  it.each([
    // path, root, platform, under
    ['/a', '/a', 'linux', true],
    ['/a/b', '/a', 'linux', true],
    ['/a/b/c', '/a', 'linux', true],
    ['/ab', '/a', 'linux', false],
    ['/a', '/a/b', 'linux', false],
    ['/b', '/a', 'linux', false],
    // trailing slashes: the copies this replaces disagreed on these
    ['/a', '/a/', 'linux', true],
    ['/a/b', '/a/', 'linux', true],
    ['/ab', '/a/', 'linux', false],
    ['/a/', '/a', 'linux', true],
    ['/a/b/', '/a', 'linux', true],
    ['/ab/', '/a', 'linux', false],
    ['/a//b', '/a', 'linux', true],
    ['/a/b', '//a', 'linux', true],
    // the root covers everything
    ['/', '/', 'linux', true],
    ['/a', '/', 'linux', true],
    ['/a/b/', '/', 'linux', true],
    // case: compared with it on linux, without it on darwin and win32
    ['/A/b', '/a', 'linux', false],
    ['/A/b', '/a', 'darwin', true],
    ['/Users/Ana/Src', '/users/ana', 'darwin', true],
    ['/Users/Anab', '/users/ana', 'darwin', false],
    ['C:\\Users\\ana\\x', 'c:/users/ana', 'win32', true],
    ['C:\\Users\\anab', 'c:/users/ana', 'win32', false],
  ] as const)('%s under %s on %s: %s', (path, root, platform, under) => {
    expect(pathIsUnder(path, root, platform)).toBe(under);
  });
});

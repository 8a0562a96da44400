import { pathIsUnder } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { isWithin } from './rule-match.js';

// The backend's "is under" is api-reach's: these are the rows where its own copy disagreed (a root
// given with a trailing slash did not cover itself).
describe('isWithin', () => {
  it.each([
    ['/a', '/a/', true],
    ['/a/', '/a/', true],
    ['/a/b', '/a/', true],
    ['/ab', '/a/', false],
    ['/a', '/', true],
    ['/', '/', true],
    ['/a//b', '/a', true],
    ['/A', '/a', false],
  ] as const)('%s under %s: %s, as pathIsUnder says', (path, root, under) => {
    expect(isWithin(path, root)).toBe(under);
    expect(pathIsUnder(path, root, 'linux')).toBe(under);
  });
});

import type { PathRule } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { foldersAbove } from './read-carry.js';

// The folders whose rename would carry a read-denied path to a name no rule denies.
describe('foldersAbove', () => {
  it.each<[string, PathRule, string[]]>([
    ['a path: every folder above it', { path: '/Users/ana/src/app/config/secrets' }, ['/Users/ana/src/app/config', '/Users/ana/src/app', '/Users/ana/src', '/Users/ana', '/Users']],
    ['a path under /tmp, spelled the kernel way', { path: '/tmp/s/key' }, ['/private/tmp/s', '/private/tmp', '/private']],
    ['an exact pattern', { pattern: '^/Users/ana/\\.npmrc$' }, ['/Users/ana', '/Users']],
    ['a pattern with a literal start', { pattern: '^/Users/ana/\\.config/gh(?:/.*)?$' }, ['/Users/ana/.config', '/Users/ana', '/Users']],
    ['a name anywhere: nothing (a folder rename keeps the name)', { pattern: '^.*/\\.env[^/]*$' }, []],
    ['a partial name: the folder holding it', { pattern: '^/Users/ana/data(?:-[^/]*)?(?:/.*)?$' }, ['/Users/ana', '/Users']],
    ['an optional last character is not part of the start', { pattern: '^/a/bc?/d$' }, ['/a']],
    ['a class escape ends the start', { pattern: '^/a/b\\d/x$' }, ['/a']],
    ['each top-level alternative', { pattern: '^/a/x/y$|^/b/z$' }, ['/a/x', '/a', '/b']],
    ['alternatives inside a group do not split: the folders above the group', { pattern: '^/a/(?:x|y)/s$' }, ['/a']],
    ['a repeated last character stays in the start (one is there)', { pattern: '^/a/b/c+/d$' }, ['/a/b', '/a']],
    ['an optional character outside the BMP is left out whole', { pattern: '^/a/b/x\u{1F600}?/d$' }, ['/a/b', '/a']],
    ['a class ends the start', { pattern: '^/a/b/[xy]/d$' }, ['/a/b', '/a']],
  ])('%s', (_what, rule, expected) => {
    expect(foldersAbove(rule, 'readDeny[0]')).toEqual(expected);
  });
});

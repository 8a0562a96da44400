import { describe, expect, it } from 'vitest';
import { darwinPath, darwinPatternPrefix } from './darwin-path.js';

describe('darwinPath', () => {
  it.each([
    ['/Users/ana/src', '/Users/ana/src'],
    ['/Users/ana/src/', '/Users/ana/src'],
    ['/', '/'],
    ['/tmp', '/private/tmp'],
    ['/tmp/x', '/private/tmp/x'],
    ['/var/folders/x1/T', '/private/var/folders/x1/T'],
    ['/VAR/folders', '/private/var/folders'],
    ['/etc/hosts', '/private/etc/hosts'],
    ['/private/var/folders/x1', '/private/var/folders/x1'],
    ['/tmpfiles', '/tmpfiles'],
    ['/a//b///', '/a/b'],
    ['//', '/'],
    ['/variant/x', '/variant/x'],
  ])('%s is spelled %s', (path, spelled) => {
    expect(darwinPath(path, 'write[0]')).toBe(spelled);
  });

  it.each([
    ['relative/path', /not an absolute path/],
    ['', /not an absolute path/],
    ['/a/../b', /not a resolved path/],
    ['/a/./b', /not a resolved path/],
    ['/..', /not a resolved path/],
  ])('refuses %j', (path, problem) => {
    expect(() => darwinPath(path, 'write[2]')).toThrow(problem);
    expect(() => darwinPath(path, 'write[2]')).toThrow(/write\[2\]/);
  });
});

describe('darwinPatternPrefix', () => {
  it.each([
    ['^/tmp/x', '^/private/tmp/x'],
    ['^\\/var\\/folders', '^/private/var\\/folders'],
    ['^/Var/x', '^/private/var/x'],
    ['(^|/)\\.env', '(^|/)\\.env'],
    ['^/tmpx', '^/tmpx'],
    ['^/private/tmp/x', '^/private/tmp/x'],
  ])('%s becomes %s', (pattern, respelled) => {
    expect(darwinPatternPrefix(pattern)).toBe(respelled);
  });
});

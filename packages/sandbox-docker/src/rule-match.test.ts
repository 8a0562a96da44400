import { describe, expect, it } from 'vitest';
import { isWithin, rulesCover } from './rule-match.js';

describe('rulesCover', () => {
  it.each([
    [{ path: '/w/.git' }, '/w/.git', true],
    [{ path: '/w/.git' }, '/w/.git/hooks/pre-commit', true],
    [{ path: '/w/.git' }, '/w/.github', false],
    [{ pattern: '(.*/)?\\.env[^/]*(/.*)?' }, '/w/.env', true],
    [{ pattern: '(.*/)?\\.env[^/]*(/.*)?' }, '/w/sub/.env.local', true],
    [{ pattern: '\\.env' }, '/w/.env', false],
    [{ path: '/d', except: [{ path: '/d/workspace' }] }, '/d/workspace/x', false],
    [{ path: '/d', except: [{ path: '/d/workspace' }] }, '/d/plugins/state', true],
    [{ pattern: '(.*/)?\\.env[^/]*', except: [{ pattern: '.*/\\.env\\.example' }] }, '/w/.env.example', false],
  ] as const)('%j covers %s: %s', (rule, path, expected) => {
    expect(rulesCover([rule])(path)).toBe(expected);
  });

  // api-reach's pathIsUnder: the rows where this package's own copy disagreed (a root given with
  // a trailing slash did not cover itself).
  it.each([
    ['/a', '/a/', true],
    ['/a/', '/a/', true],
    ['/a/b', '/a/', true],
    ['/ab', '/a/', false],
    ['/a//b', '/a', true],
    ['/A', '/a', false],
  ] as const)('isWithin(%s, %s) is %s', (path, root, under) => {
    expect(isWithin(path, root)).toBe(under);
  });

  it('treats / as holding every absolute path', () => {
    expect(isWithin('/etc', '/')).toBe(true);
    expect(isWithin('/', '/')).toBe(true);
  });
});

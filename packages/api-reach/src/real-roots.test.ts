import { describe, expect, it } from 'vitest';
import type { ProtectedLists } from './lists.js';
import { matchesRule } from './match.js';
import { withRealRoots } from './real-roots.js';

const lists: ProtectedLists = {
  platform: 'linux',
  control: [
    { path: '/home/a/.aalis', except: [{ path: '/home/a/.aalis/workspace' }, { pattern: '^.*/keep$' }, { path: '/elsewhere' }] },
    { path: '/home/a/.aalis/config.yaml' },
  ],
  landing: [{ pattern: '^.*/\\.git$' }, { path: '/home/a/.bashrc' }],
  denyRead: [{ path: '/home/a/.aalis/secrets.yaml' }],
};

const links: Record<string, string> = {
  '/home/a/.aalis': '/disk/aalis',
  '/home/a/.aalis/config.yaml': '/home/a/dotfiles/aalis.yaml',
  '/home/a/.aalis/secrets.yaml': '/vault/secrets.yaml',
  '/home/a/.bashrc': '/home/a/.bashrc',
};

describe('withRealRoots', () => {
  const real = withRealRoots(lists, (p) => links[p]);

  it('adds a rule at the real root right after each linked one, moving carve-outs under the root', () => {
    expect(real.control).toEqual([
      lists.control[0],
      { path: '/disk/aalis', except: [{ path: '/disk/aalis/workspace' }, { pattern: '^.*/keep$' }, { path: '/elsewhere' }] },
      lists.control[1],
      { path: '/home/a/dotfiles/aalis.yaml' },
    ]);
    expect(real.denyRead).toEqual([{ path: '/home/a/.aalis/secrets.yaml' }, { path: '/vault/secrets.yaml' }]);
  });

  it('leaves pattern rules, unlinked roots and missing paths alone', () => {
    expect(real.landing).toEqual(lists.landing);
    expect(withRealRoots(lists, () => undefined)).toEqual(lists);
  });

  it('the real roots now match as the spelled ones did', () => {
    expect(real.control.some((r) => matchesRule(r, '/disk/aalis/plugins/x', 'linux'))).toBe(true);
    expect(real.control.some((r) => matchesRule(r, '/disk/aalis/workspace/x', 'linux'))).toBe(false);
    expect(real.control.some((r) => matchesRule(r, '/home/a/dotfiles/aalis.yaml', 'linux'))).toBe(true);
    expect(real.denyRead.some((r) => matchesRule(r, '/vault/secrets.yaml', 'linux'))).toBe(true);
  });

  it('does not add a copy for a spelling that differs only in case where case does not count', () => {
    const darwin: ProtectedLists = { platform: 'darwin', control: [{ path: '/Users/A/x' }], landing: [], denyRead: [] };
    expect(withRealRoots(darwin, () => '/users/a/x').control).toHaveLength(1);
  });
});

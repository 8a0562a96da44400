import { describe, expect, it } from 'vitest';
import { HOME, LISTS, PROJECT, reachInput, SESSION_TMP } from '../test/fixture.js';
import { ReachInputError } from './errors.js';
import { matchesRule } from './match.js';
import { gitDirLandings, type LocalReach, resolveReach } from './reach.js';
import { ACCESS_TIERS } from './tier.js';

const local = (r: ReturnType<typeof resolveReach>): LocalReach => {
  if (r.exec === 'none') throw new Error('expected a local reach');
  return r;
};

describe('resolveReach', () => {
  it.each(ACCESS_TIERS)('other has no local effect in %s', (tier) => {
    expect(resolveReach(reachInput('other', tier, 'ask'))).toEqual({ exec: 'none' });
  });

  it.each([
    ['readonly', 'sandbox'],
    ['confirm', 'host'],
    ['workspace', 'sandbox'],
    ['full', 'host'],
  ] as const)('an owner in %s executes in the %s', (tier, exec) => {
    expect(resolveReach(reachInput('owner', tier, 'ask')).exec).toBe(exec);
  });

  it('writable roots per tier', () => {
    expect(local(resolveReach(reachInput('owner', 'readonly', 'ask'))).writableRoots).toEqual([SESSION_TMP]);
    expect(local(resolveReach(reachInput('owner', 'confirm', 'ask'))).writableRoots).toEqual([]);
    expect(local(resolveReach(reachInput('owner', 'full', 'ask'))).writableRoots).toEqual([]);
    const ws = local(resolveReach(reachInput('owner', 'workspace', 'ask'))).writableRoots;
    expect(ws.slice(0, 5)).toEqual([PROJECT, `${HOME}/extra`, `${HOME}/wt/feature`, `${PROJECT}/.git`, '/srv/repos/app.git']);
    // the sandbox's own cache home, never the host's caches (what is planted there runs on the host)
    expect(ws).toContain(`${HOME}/.cache/aalis-sandbox`);
    expect(ws).not.toContain(`${HOME}/.npm`);
    expect(ws).not.toContain(`${HOME}/.cache`);
    expect(ws).not.toContain(`${HOME}/.cargo/registry`);
    expect(ws.at(-1)).toBe(SESSION_TMP);
  });

  it('keeps the input lists and extends only the landings', () => {
    const r = local(resolveReach(reachInput('owner', 'workspace', 'ask')));
    expect(r.lists.control).toEqual(LISTS.control);
    expect(r.lists.denyRead).toEqual(LISTS.denyRead);
    expect(r.lists.landing).toEqual([...LISTS.landing, ...gitDirLandings([`${PROJECT}/.git`, '/srv/repos/app.git'])]);
    expect(Object.isFrozen(r)).toBe(true);
    expect(Object.isFrozen(r.lists.landing)).toBe(true);
  });

  it('refuses malformed input with a clear error (fail closed)', () => {
    expect(() => resolveReach(reachInput('owner', 'root' as never, 'ask'))).toThrow(/tier 'root' is not one of readonly, confirm, workspace, full/);
    expect(() => resolveReach(reachInput('admin' as never, 'full', 'ask'))).toThrow(ReachInputError);
    expect(() => resolveReach(reachInput('owner', 'full', 'maybe' as never))).toThrow(/onBoundary/);
    expect(() => resolveReach(reachInput('owner', 'workspace', 'ask', { place: { home: 'proj' } }))).toThrow(/place\.home 'proj' is not an absolute path/);
    expect(() => resolveReach(reachInput('owner', 'workspace', 'ask', { gitDirs: ['../.git'] }))).toThrow(/a git directory/);
    expect(() => resolveReach(reachInput('owner', 'workspace', 'ask', { localPorts: [0] }))).toThrow(/not a TCP port/);
    const badLists = { ...LISTS, landing: [{ pattern: '(?=x)' }] };
    expect(() => resolveReach(reachInput('owner', 'workspace', 'ask', { lists: badLists }))).toThrow(/lookarounds/);
  });
});

describe('gitDirLandings', () => {
  const rules = gitDirLandings(['/srv/repos/app.git', '/home/a/sep-gitdir']);
  const landing = (p: string) => rules.some((r) => matchesRule(r, p, 'linux'));
  it.each([
    ['/srv/repos/app.git', true],
    ['/srv/repos/app.git/config', true],
    ['/srv/repos/app.git/hooks', true],
    ['/srv/repos/app.git/hooks/pre-receive', true],
    ['/srv/repos/app.git/commondir', true],
    ['/srv/repos/app.git/config.worktree', true],
    ['/srv/repos/app.git/modules/x/y/hooks/z', true],
    ['/srv/repos/app.git/worktrees', true],
    ['/srv/repos/app.git/worktrees/w', true],
    ['/srv/repos/app.git/worktrees/w/commondir', true],
    ['/srv/repos/app.git/worktrees/w/config.worktree', true],
    ['/srv/repos/app.git/worktrees/w/HEAD', false],
    ['/srv/repos/app.git/HEAD', false],
    ['/srv/repos/app.git/objects/pack/x.pack', false],
    ['/srv/repos/app.git/refs/heads/main', false],
    ['/srv/repos/app.gitx/config', false],
    ['/home/a/sep-gitdir/hooks/post-checkout', true],
    ['/home/a/sep-gitdir/HEAD', false],
    ['/home/a/proj/.git/HEAD', false],
    ['/home/a/proj/.git/worktrees/w/HEAD', false],
    ['/home/a/decoy/HEAD', true],
    ['/HEAD', true],
    ['/home/a/decoy/HEADER', false],
  ])('%s → %s', (path, expected) => {
    expect(landing(path)).toBe(expected);
  });

  it('adds the HEAD rule even without git directories', () => {
    expect(gitDirLandings([]).some((r) => matchesRule(r, '/x/HEAD', 'linux'))).toBe(true);
  });
});

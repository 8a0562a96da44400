import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { landingLinkChains } from './landing-link-chains.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-landing-links-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const landingsAre =
  (...names: string[]) =>
  (path: string) =>
    names.some((n) => path === join(dir, n) || path.startsWith(`${join(dir, n)}/`));

describe('landingLinkChains: the landings that are symlinks, on the host as it is', () => {
  it('finds a landing link, with every name it goes through and where it ends', () => {
    mkdirSync(join(dir, 'dotfiles', 'v2'), { recursive: true });
    symlinkSync('v2', join(dir, 'dotfiles', 'current'));
    symlinkSync('dotfiles/current/agent.md', join(dir, 'CLAUDE.md'));
    const [found, ...rest] = landingLinkChains([join(dir, 'CLAUDE.md'), join(dir, 'README.md')], landingsAre('CLAUDE.md'));
    expect(rest).toEqual([]);
    expect(found?.link).toBe(join(dir, 'CLAUDE.md'));
    expect(found?.chain.through).toEqual(expect.arrayContaining([join(dir, 'dotfiles'), join(dir, 'dotfiles', 'current'), join(dir, 'dotfiles', 'v2')]));
    // dangling: where it would end is still where it ends
    expect(found?.chain.target).toBe(join(dir, 'dotfiles', 'v2', 'agent.md'));
  });

  it("looks inside a landing folder, also one that is a link, and keeps only the landings' links", () => {
    mkdirSync(join(dir, 'ci', 'hooks'), { recursive: true });
    symlinkSync('ci/hooks', join(dir, '.husky'));
    symlinkSync('../../scripts/pc.sh', join(dir, 'ci', 'hooks', 'pre-commit'));
    writeFileSync(join(dir, 'ci', 'hooks', 'plain'), '');
    symlinkSync('x', join(dir, 'not-a-landing'));
    const links = landingLinkChains([join(dir, '.husky'), join(dir, 'not-a-landing')], landingsAre('.husky')).map((l) => l.link);
    expect(links.sort()).toEqual([join(dir, '.husky'), join(dir, '.husky', 'pre-commit')]);
  });

  it('a loop, a missing candidate and a file on the way throw nothing', () => {
    symlinkSync('loop-b', join(dir, 'loop-a'));
    symlinkSync('loop-a', join(dir, 'loop-b'));
    writeFileSync(join(dir, 'file'), '');
    const found = landingLinkChains([join(dir, 'loop-a'), join(dir, 'missing'), join(dir, 'file', 'under'), join(dir, 'loop-a', 'x')], () => true);
    // the loop is a link whose chain ends nowhere; the rest are no links
    expect(found.map((l) => l.link)).toEqual([join(dir, 'loop-a')]);
    expect(found[0]?.chain.target).toBeUndefined();
    expect(found[0]?.chain.through).toEqual(expect.arrayContaining([join(dir, 'loop-a'), join(dir, 'loop-b')]));
  });
});

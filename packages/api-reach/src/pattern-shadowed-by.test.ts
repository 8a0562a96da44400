import { describe, expect, it } from 'vitest';
import { patternLiteral } from './pattern-literal.js';
import { patternShadowedBy } from './pattern-shadowed-by.js';
import type { SandboxPolicy } from './sandbox-policy.js';

const FLAKE = '^/w/sub/(?:.*/)?[^/]*\\.nix$';
const policy: SandboxPolicy = {
  readDeny: [{ pattern: '^.*/\\.env$' }],
  readAllowWithin: [],
  write: ['/w', '/h/.cache'],
  writeDeny: [{ pattern: FLAKE }, { pattern: '^/h/\\.vscode/extensions(?:/.*)?$' }, { pattern: '^/h/\\.cache/p10k-[^/]*$' }, { pattern: '^/w/scripts$' }],
  writeExceptions: [],
  controlDeny: [],
  network: 'off',
  localPorts: [],
  unixSockets: [],
};

describe('patternShadowedBy: which deny pattern a symlink at a path would redirect', () => {
  it.each([
    // in a flake's folder, below it: nix's imports go through the link (h113)
    ['/w/sub/nix', FLAKE],
    ['/w/sub/nix/lib', FLAKE],
    // above the pattern's place
    ['/w', FLAKE],
    ['/h/.vscode', '^/h/\\.vscode/extensions(?:/.*)?$'],
    ['/h/.vscode/extensions/x', '^/h/\\.vscode/extensions(?:/.*)?$'],
    // not the folder itself, nor a neighbour
    ['/w/sub', undefined],
    ['/w/subway/nix', undefined],
    ['/h/.vscode-other', undefined],
    // a pattern that matches nothing below its names (p10k's files), an exact name, an unanchored one
    ['/h/.cache/p10k-x', undefined],
    ['/h/.cache/other', undefined],
    ['/w/scripts', undefined],
    ['/w/a/.env', undefined],
  ])('a link at %s redirects %s', (link, expected) => {
    expect(patternShadowedBy(policy, link)).toBe(expected);
  });
});

describe('patternLiteral', () => {
  it.each([
    ['^/r/\\.git/worktrees(?:/[^/]+)?$', { literal: '/r/.git/worktrees', exact: false, whole: true, deeper: true }],
    ['^/w/scripts$', { literal: '/w/scripts', exact: true, whole: true, deeper: false }],
    [FLAKE, { literal: '/w/sub/', exact: false, whole: false, deeper: true }],
    ['^.*/HEAD$', { literal: '', exact: false, whole: false, deeper: true }],
    ['(.*/)?\\.env[^/]*', { literal: '', exact: false, whole: false, deeper: true }],
  ])('%s', (pattern, expected) => {
    expect(patternLiteral(pattern)).toEqual(expected);
  });
});

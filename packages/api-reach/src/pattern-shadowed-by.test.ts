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
    // above the pattern's place
    ['/w', FLAKE],
    ['/h/.vscode', '^/h/\\.vscode/extensions(?:/.*)?$'],
    // within it: left to the names the rules give (h114: every link in a flake folder, or under the home, was refused)
    ['/w/sub/nix', undefined],
    ['/w/sub/nix/lib', undefined],
    ['/h/.vscode/extensions/x', undefined],
    ['/h/.venv/lib64', undefined],
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
    ['^/r/\\.git/worktrees(?:/[^/]+)?$', { literal: '/r/.git/worktrees', exact: false, whole: true }],
    ['^/w/scripts$', { literal: '/w/scripts', exact: true, whole: true }],
    [FLAKE, { literal: '/w/sub/', exact: false, whole: false }],
    ['^.*/HEAD$', { literal: '', exact: false, whole: false }],
    ['(.*/)?\\.env[^/]*', { literal: '', exact: false, whole: false }],
  ])('%s', (pattern, expected) => {
    expect(patternLiteral(pattern)).toEqual(expected);
  });
});

import { describe, expect, it } from 'vitest';
import { namedPathsUnder } from './named-paths-under.js';
import type { SandboxPolicy } from './sandbox-policy.js';

const policy: SandboxPolicy = {
  readDeny: [{ path: '/home/u/.ssh' }, { pattern: '^.*/\\.env$' }],
  readAllowWithin: [],
  write: ['/home/u/proj'],
  writeDeny: [{ path: '/home/u/.npm/_npx' }, { path: '/home/u/proj/.git/hooks' }],
  writeExceptions: [],
  controlDeny: [{ path: '/home/u/.aalis' }, { path: '/home/u/.npm/_npx' }],
  network: 'off',
  localPorts: [],
  unixSockets: [],
};

describe('namedPathsUnder', () => {
  it.each([
    ['/home/u/.npm', () => true, ['/home/u/.npm/_npx']],
    ['/home/u', () => true, ['/home/u/.ssh', '/home/u/.npm/_npx', '/home/u/proj/.git/hooks', '/home/u/.aalis']],
    ['/home/u', (p: string) => p.includes('.git'), ['/home/u/proj/.git/hooks']],
    // the path itself is not under itself; patterns name no one path
    ['/home/u/.npm/_npx', () => true, []],
    ['/home/u/proj/src', () => true, []],
    ['/home/u/.npm-other', () => true, []],
  ])('under %s', (path, isProtected, expected) => {
    expect(namedPathsUnder(policy, path, isProtected)).toEqual(expected);
  });
});

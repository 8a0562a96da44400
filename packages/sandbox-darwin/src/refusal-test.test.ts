import { refusedWritesIn, type SandboxPolicy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { darwinRefusal } from './refusal-test.js';

// Stderr shapes as macOS tools print a Seatbelt refusal (EPERM), read by api-reach's shared
// parser and judged by this backend's test. This is a mock on Linux: no Seatbelt runs here
// (no macOS); test:mac checks the same detection against real refusals.
const policy: SandboxPolicy = {
  readDeny: [{ path: '/Users/ana/.ssh' }, { pattern: '^.*/\\.env$' }, { path: '/Users/ana/app/conf/secret' }],
  readAllowWithin: [],
  write: ['/Users/ana/app'],
  writeDeny: [{ pattern: '^.*/\\.git/hooks(?:/.*)?$' }],
  writeExceptions: [],
  controlDeny: [],
  network: 'off',
  localPorts: [],
  unixSockets: [],
};
const cwd = '/Users/ana/app';

describe('darwinRefusal', () => {
  it.each([
    ['touch: /Users/ana/out.txt: Operation not permitted', ['/Users/ana/out.txt']],
    ['sh: /Users/ana/out.txt: Operation not permitted', ['/Users/ana/out.txt']],
    ['sh: line 1: /etc/x: Operation not permitted', ['/private/etc/x']],
    ['bash: ../out.txt: Operation not permitted', ['/Users/ana/out.txt']],
    ["Error: EPERM: operation not permitted, open '/Users/ana/x.json'", ['/Users/ana/x.json']],
    ["PermissionError: [Errno 1] Operation not permitted: '/Users/ana/y'", ['/Users/ana/y']],
    ['zsh:1: operation not permitted: /Users/ana/z', ['/Users/ana/z']],
    ['mv: rename a to /Users/ana/b: Operation not permitted', ['/Users/ana/b']],
    ['mv: rename .env to notes.txt: Operation not permitted', ['/Users/ana/app/.env']],
    ['mv: rename /Users/ana/.ssh to /Users/ana/app/x: Operation not permitted', ['/Users/ana/.ssh']],
    ['mv: rename /Users/ana/app to /Users/ana/app2: Operation not permitted', ['/Users/ana/app', '/Users/ana/app2']],
    ['mv: rename /USERS/ANA/APP to /Users/ana/app/x: Operation not permitted', ['/USERS/ANA/APP']],
    ['mv: rename conf to conf2: Operation not permitted', ['/Users/ana/app/conf']],
    ['mv: rename plain to plain2: Operation not permitted', []],
    ['touch: .git/hooks/pre-commit: Operation not permitted', ['/Users/ana/app/.git/hooks/pre-commit']],
    ["fatal: could not create work tree dir 'clone': Operation not permitted", []],
    ['cat: /Users/ana/.ssh/id_rsa: Operation not permitted', []],
    ['curl: (7) Failed to connect to example.org port 443: Operation not permitted', []],
    ['touch: /Users/ana/app/ok: No such file or directory', []],
    ['sh: /Users/ana/with space/x: Operation not permitted', ['/Users/ana/with space/x']],
    ['', []],
  ])('%j reports %j', (stderr, expected) => {
    expect(refusedWritesIn(stderr, cwd, darwinRefusal(policy)).paths).toEqual(expected);
  });

  it('reports each path once across lines', () => {
    const stderr = 'touch: /Users/ana/a: Operation not permitted\ntouch: /Users/ana/a: Operation not permitted\nrm: /Users/ana/b: Operation not permitted\n';
    expect(refusedWritesIn(stderr, cwd, darwinRefusal(policy))).toEqual({ denied: true, paths: ['/Users/ana/a', '/Users/ana/b'] });
  });
});

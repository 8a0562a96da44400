import { ENV_FILES, GIT_LANDINGS, PROJECT_LANDINGS, type SandboxPolicy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import type { EntryKind, HostFacts } from './scan.js';
import { translatePolicy, UntranslatableError } from './translate.js';

const WS = '/w/ws';
const base: SandboxPolicy = {
  readDeny: [ENV_FILES, { path: '/h/.ssh' }, { path: '/d', except: [{ path: '/d/workspace' }] }],
  readAllowWithin: ['/d/tmp/s1'],
  write: [WS, '/d/tmp/s1'],
  writeDeny: [...GIT_LANDINGS, ...PROJECT_LANDINGS],
  writeExceptions: [{ path: `${WS}/node_modules` }, { path: '/h/.bashrc' }],
  controlDeny: [{ path: `${WS}/node_modules/.bin/ctl` }],
  network: 'off',
  localPorts: [],
  unixSockets: [WS],
};

function facts(kinds: Record<string, EntryKind>, found: Record<string, EntryKind> = {}, sockets: string[] = []): HostFacts {
  return {
    kinds: new Map(Object.entries(kinds)),
    found: Object.entries(found).map(([path, kind]) => ({ path, kind })),
    sockets,
    visited: 0,
  };
}

const host = facts(
  {
    [WS]: 'dir',
    '/d/tmp/s1': 'dir',
    '/h/.ssh': 'dir',
    '/d': 'dir',
    '/d/workspace': 'dir',
    [`${WS}/node_modules`]: 'dir',
    [`${WS}/node_modules/.bin/ctl`]: 'file',
    '/h/.bashrc': 'file',
    [`${WS}/.git`]: 'dir',
    [`${WS}/.vscode`]: 'dir',
  },
  {
    [`${WS}/.env`]: 'file',
    [`${WS}/.env.example`]: 'file',
    [`${WS}/.git`]: 'dir',
    [`${WS}/.git/hooks`]: 'dir',
    [`${WS}/.git/config`]: 'file',
    [`${WS}/.vscode`]: 'dir',
    [`${WS}/.vscode/tasks.json`]: 'file',
    [`${WS}/sub/.env.d`]: 'dir',
  },
  ['/run/docker.sock', `${WS}/dev.sock`],
);

const plan = translatePolicy(base, host, { cwd: WS, emptyFile: '/E/empty' });
const mountOf = (p: string) => plan.mounts.find((m) => m.path === p);
const argIndex = (...seq: string[]) => {
  for (let i = 0; i < plan.args.length; i++) if (seq.every((s, j) => plan.args[i + j] === s)) return i;
  return -1;
};

describe('translatePolicy', () => {
  it.each([
    // path, expected state, why: the layer that wins
    ['/', 'ro', 'reads default, writes denied by default'],
    [WS, 'rw', 'write root'],
    [`${WS}/.env`, 'hidden', 'readDeny pattern on an existing file'],
    [`${WS}/sub/.env.d`, 'hidden', 'a directory named .env* is hidden whole'],
    ['/h/.ssh', 'hidden', 'readDeny path'],
    ['/d', 'hidden', 'readDeny with carve-out'],
    ['/d/workspace', 'ro', 'the carve-out is readable again'],
    ['/d/tmp/s1', 'rw', 'readAllowWithin put back, and a write root'],
    [`${WS}/.git`, 'rw', '.git itself is pinned but its contents stay writable'],
    [`${WS}/.git/hooks`, 'ro', 'writeDeny over a write root'],
    [`${WS}/.git/config`, 'ro', 'writeDeny file'],
    [`${WS}/.vscode/tasks.json`, 'ro', 'writeDeny pattern file'],
    [`${WS}/node_modules/.bin/ctl`, 'ro', 'controlDeny after writeExceptions'],
    ['/h/.bashrc', 'rw', 'writeExceptions: an approved landing outside the write roots'],
    ['/run/docker.sock', 'hidden', 'a socket outside unixSockets'],
  ] as const)('%s is %s (%s)', (path, state, _why) => {
    expect(mountOf(path)?.state).toBe(state);
  });

  it('keeps .env.example readable (the rule carve-out) by not mounting over it', () => {
    expect(mountOf(`${WS}/.env.example`)).toBeUndefined();
  });

  it('does not hide a socket under unixSockets', () => {
    expect(mountOf(`${WS}/dev.sock`)).toBeUndefined();
  });

  it('emits parents before children, so later layers win', () => {
    expect(argIndex('--ro-bind', '/', '/')).toBe(0);
    expect(argIndex('--bind', WS, WS)).toBeLessThan(argIndex('--ro-bind', `${WS}/.git/hooks`, `${WS}/.git/hooks`));
    expect(argIndex('--tmpfs', '/d')).toBeLessThan(argIndex('--ro-bind', '/d/workspace', '/d/workspace'));
    expect(argIndex('--bind', `${WS}/node_modules`, `${WS}/node_modules`)).toBeLessThan(
      argIndex('--ro-bind', `${WS}/node_modules/.bin/ctl`, `${WS}/node_modules/.bin/ctl`),
    );
    // hidden directories go read-only only after their put-backs were mounted into them
    expect(argIndex('--remount-ro', '/d')).toBeGreaterThan(argIndex('--ro-bind', '/d/workspace', '/d/workspace'));
  });

  it('hides files with the empty file and directories with a read-only tmpfs', () => {
    expect(argIndex('--ro-bind', '/E/empty', `${WS}/.env`)).toBeGreaterThan(0);
    expect(argIndex('--tmpfs', '/h/.ssh')).toBeGreaterThan(0);
    expect(argIndex('--remount-ro', '/h/.ssh')).toBeGreaterThan(0);
    expect(plan.usesEmptyFile).toBe(true);
  });

  it('asks for read-only placeholders where a denied name is missing in a writable root', () => {
    const names = plan.placeholders.map((p) => p.path);
    expect(names).toContain(`${WS}/.envrc`);
    expect(names).toContain(`${WS}/.vscode/settings.json`);
    expect(names).toContain(`${WS}/AGENTS.md`);
    expect(names).not.toContain(`${WS}/.vscode`); // exists
    expect(names).toContain(`${WS}/.husky`);
    expect(mountOf(`${WS}/.envrc`)?.state).toBe('ro');
  });

  it('keeps /tmp private and puts back only what the policy names under it', () => {
    const p = translatePolicy({ ...base, write: ['/tmp/ws'], unixSockets: [] }, facts({ '/tmp/ws': 'dir', '/tmp/other': 'dir' }, {}, ['/tmp/other/agent.sock']), {
      cwd: '/tmp/ws',
      emptyFile: '/E/empty',
    });
    const tmp = p.args.indexOf('/tmp');
    expect(p.args[tmp - 1]).toBe('--tmpfs');
    expect(p.args.indexOf('/tmp/ws')).toBeGreaterThan(tmp);
    expect(p.args).not.toContain('/tmp/other/agent.sock'); // invisible already
  });

  it.each([['relative'], ['/a/../b'], ['/a/']])('refuses the non-real path %s', (bad) => {
    expect(() => translatePolicy({ ...base, write: [bad] }, host, { cwd: WS, emptyFile: '/E/empty' })).toThrow(UntranslatableError);
  });

  it('refuses a pattern outside the contract subset', () => {
    expect(() => translatePolicy({ ...base, readDeny: [{ pattern: '(?<=x)y' }] }, host, { cwd: WS, emptyFile: '/E/empty' })).toThrow();
  });
});

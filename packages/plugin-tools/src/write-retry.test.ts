import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { escapePattern, type SandboxPolicy } from '@aalis/api-reach';
import { afterAll, describe, expect, it } from 'vitest';
import { NEVER_WRITTEN } from './secrets.js';
import { needOf, type RefusalRule, withMovedAside } from './write-retry.js';

// Real directories; the policy is written out by hand so each row shows the layer it exercises.
const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-need-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const project = join(root, 'project');
const outside = join(root, 'outside');
const control = join(root, 'data');
for (const dir of [join(project, '.git'), outside, control]) mkdirSync(dir, { recursive: true });
writeFileSync(join(project, 'notes.txt'), 'x');
writeFileSync(join(project, '.envrc'), 'x');
writeFileSync(join(outside, 'kept.txt'), 'x');

const exact = (p: string) => ({ pattern: `^${escapePattern(p)}$` });
const policy: SandboxPolicy = {
  readDeny: [{ pattern: '^.*/\\.env[^/]*$' }],
  readAllowWithin: [join(root, 'tmp')],
  write: [project, join(project, '.git')],
  writeDeny: [{ pattern: '^.*/\\.envrc$' }, { pattern: '^.*/\\.git$' }, { pattern: '^.*/\\.vscode(?:/tasks\\.json)?$' }],
  writeExceptions: [],
  controlDeny: [{ path: control }, ...NEVER_WRITTEN],
  network: 'off',
  localPorts: [],
  unixSockets: [project],
};

const TABLE: [string, string, 'ask' | 'writable' | RefusalRule, string | undefined, string?][] = [
  ['an existing file in a root the layers allow: a grant would change nothing', join(project, 'notes.txt'), 'writable', undefined],
  ['a new landing in a writable directory: asked exactly', join(project, 'sub-missing', '.vscode'), 'ask', join(project, 'sub-missing', '.vscode')],
  ['a new landing the sandbox hides (.envrc is on the deny-read list): no grant helps, never asked', join(project, 'sub-missing', '.envrc'), 'no-grant-helps', undefined],
  ['an existing landing the sandbox hides (.envrc is on the deny-read list): no grant helps', join(project, '.envrc'), 'no-grant-helps', undefined],
  ['a new file in a new landing directory: the directory is asked first', join(project, '.vscode', 'tasks.json'), 'ask', join(project, '.vscode')],
  ['a new file outside the roots: asked by its nearest existing directory', join(outside, 'a', 'b.txt'), 'ask', outside, join(outside, 'a', 'b.txt')],
  ['an existing file outside the roots: asked exactly', join(outside, 'kept.txt'), 'ask', join(outside, 'kept.txt')],
  ['the control plane', join(control, 'config.yaml'), 'control-plane', undefined],
  ['a never-written secret', join(project, '.env.local'), 'secret-file', undefined],
  ['a root the sandbox mounts (the git dir)', join(project, '.git'), 'no-grant-helps', undefined],
  ['a name that was not UTF-8', join(project, '\uFFFD', 'x'), 'not-utf8', undefined],
];

describe('needOf: what a refused write needs before a retry can succeed', () => {
  it.each(TABLE)('%s', async (_name, path, expected, asked, toMake) => {
    const need = await needOf(policy, path, 'linux');
    if (need.kind === 'unaskable') expect(need.refusal).toMatchObject({ path, rule: expected });
    else expect(need).toEqual(need.kind === 'ask' ? { kind: 'ask', path: asked, ...(toMake ? { toMake } : {}) } : { kind: expected });
  });

  it('after the directory of a new landing outside the roots is granted, the landing itself is asked exactly, then it is writable', async () => {
    const path = join(outside, '.vscode');
    expect(await needOf(policy, path, 'linux')).toEqual({ kind: 'ask', path: outside, toMake: path });
    const withDir = { ...policy, write: [...policy.write, outside] };
    expect(await needOf(withDir, path, 'linux')).toEqual({ kind: 'ask', path });
    expect(await needOf({ ...withDir, writeExceptions: [exact(path)] }, path, 'linux')).toEqual({ kind: 'writable' });
  });
});

describe('withMovedAside', () => {
  it('says where the sandbox kept the command\'s version of a refused entry, and leaves the others', () => {
    const refusals = [
      { path: '/w/.vscode', rule: 'no-grant-helps' as const, message: 'no.' },
      { path: '/w/.envrc', rule: 'secret-file' as const, message: 'never.' },
    ];
    const moved = [
      { path: '/w/.vscode', to: '/state/undone/run/w/.vscode', reason: 'moved-aside' as const },
      { path: '/w/.envrc', reason: 'deleted' as const },
    ];
    expect(withMovedAside(refusals, moved)).toEqual([
      { path: '/w/.vscode', rule: 'no-grant-helps', message: "no. The command's version is kept at /state/undone/run/w/.vscode.", movedTo: '/state/undone/run/w/.vscode' },
      { path: '/w/.envrc', rule: 'secret-file', message: 'never.' },
    ]);
  });
});

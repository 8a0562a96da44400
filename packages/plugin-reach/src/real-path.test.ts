import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitDirsOf } from './git-dirs.js';
import { realPathOf, realPathOfSync } from './real-path.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-realpath-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, 'real', 'dir'), { recursive: true });
symlinkSync(join(root, 'real'), join(root, 'link'));
symlinkSync('/etc', join(root, 'real', 'escape'));

describe('realPathOf', () => {
  it.each([
    ['a symlinked directory', 'link/dir', 'real/dir'],
    ['a new file under a symlink', 'link/dir/new.txt', 'real/dir/new.txt'],
    ['new directories under a symlink', 'link/a/b/c', 'real/a/b/c'],
    ['.. folded before resolving', 'real/dir/../dir/x', 'real/dir/x'],
  ])('%s', async (_name, input, expected) => {
    expect(await realPathOf(join(root, input))).toBe(join(root, expected));
    expect(realPathOfSync(join(root, input))).toBe(join(root, expected));
  });

  it('judges a symlink that escapes where it really lands', async () => {
    expect(await realPathOf(join(root, 'link', 'escape', 'passwd'))).toBe('/etc/passwd');
    expect(await realPathOf(join(root, 'real', 'escape', 'new-file'))).toBe('/etc/new-file');
  });

  it('takes relative paths from the base', async () => {
    expect(await realPathOf('dir/x', join(root, 'link'))).toBe(join(root, 'real', 'dir', 'x'));
  });
});

describe('gitDirsOf', () => {
  it('finds .git upwards, a .git file of a worktree, and its commondir', () => {
    const repo = join(root, 'repo');
    mkdirSync(join(repo, '.git', 'worktrees', 'wt'), { recursive: true });
    mkdirSync(join(repo, 'sub', 'deeper'), { recursive: true });
    expect(gitDirsOf(join(repo, 'sub', 'deeper'))).toEqual([join(repo, '.git')]);

    const worktree = join(root, 'wt');
    mkdirSync(worktree);
    writeFileSync(join(worktree, '.git'), `gitdir: ${join(repo, '.git', 'worktrees', 'wt')}\n`);
    writeFileSync(join(repo, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    expect(gitDirsOf(worktree)).toEqual([join(repo, '.git', 'worktrees', 'wt'), join(repo, '.git')]);
  });

  it('is empty outside a repository', () => {
    expect(gitDirsOf(join(root, 'real'))).toEqual([]);
  });
});

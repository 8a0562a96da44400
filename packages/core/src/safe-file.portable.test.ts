// The fallback for systems without /proc/self/fd (macOS), forced on Linux: names re-checked by
// realpath and device/inode instead of reached through a descriptor. The planted cases must be
// refused the same way; a racer is not tried (the fallback leaves a window, as the README says).
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

process.env.AALIS_SAFE_FILE_PORTABLE = '1';
const layer = await import('./safe-file.js');
const { HAS_PROC_FD } = await import('./dir-anchor.js');
const { SafeFileError } = await import('./safe-file-error.js');

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-safe-portable-')));
const ws = join(root, 'ws');
const home = join(root, 'home');
beforeAll(() => {
  mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
  mkdirSync(home);
  writeFileSync(join(home, '.bashrc'), 'export OK=1\n');
});
afterAll(() => {
  delete process.env.AALIS_SAFE_FILE_PORTABLE;
  rmSync(root, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof SafeFileError) return error.code;
    throw error;
  }
}

describe('safe file layer, portable fallback (no /proc/self/fd)', () => {
  it('is the fallback', () => {
    expect(HAS_PROC_FD).toBe(false);
  });

  it('refuses dangling symlinks at the name and symlinked parents, writes and replaces atomically, and changes nothing outside', async () => {
    symlinkSync(join(home, 'planted'), join(ws, 'to-home'));
    symlinkSync(join(ws, '.git', 'hooks', 'pre-commit'), join(ws, 'to-hook'));
    symlinkSync(home, join(ws, 'link'));
    linkSync(join(home, '.bashrc'), join(ws, 'hard'));
    expect(await codeOf(layer.writeFileAtomic(join(ws, 'to-home'), 'x'))).toBe('final-symlink');
    expect(await codeOf(layer.copyFileAtomic(join(home, '.bashrc'), join(ws, 'to-hook')))).toBe('final-symlink');
    expect(await codeOf(layer.openForAppend(join(ws, 'to-home')).then((h) => h.close()))).toBe('final-symlink');
    expect(await codeOf(layer.writeFileAtomic(join(ws, 'link', 'f'), 'x'))).toBe('parent-elsewhere');
    expect(await codeOf(layer.makeDirs(join(ws, 'link', 'a', 'b')))).toBe('parent-elsewhere');
    expect(await codeOf(layer.readFileNoFollow(join(ws, 'link', '.bashrc')))).toBe('opened-elsewhere');
    expect(await codeOf(layer.writeFileAtomic(join(ws, 'hard'), 'new\n'))).toBe('ok');
    expect(await codeOf(layer.writeFileAtomic(join(ws, 'a', 'b', 'c.txt'), 'c', { createParents: true }))).toBe('ok');
    expect(readFileSync(join(ws, 'a', 'b', 'c.txt'), 'utf8')).toBe('c');
    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe('export OK=1\n');
    expect(readdirSync(home)).toEqual(['.bashrc']);
    expect(readdirSync(join(ws, '.git', 'hooks'))).toEqual([]);
    expect(lstatSync(join(ws, 'to-home')).isSymbolicLink()).toBe(true);
  });
});

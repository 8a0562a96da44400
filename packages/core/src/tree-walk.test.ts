// The walk by descriptors on real trees: every name (bytes that are not UTF-8, a depth past
// PATH_MAX), no symlink followed, a directory swapped for a symlink mid-walk refused with nothing
// under it visited, and a kernel file system bound inside refused (as root).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWalkedFile, type WalkEntry, walkTreeNoFollow } from './tree-walk.js';

const made: string[] = [];
function tree(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-walk-')));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

async function walkAll(root: string, enter = (_e: WalkEntry) => true): Promise<{ path: string; kind: string }[]> {
  const seen: { path: string; kind: string }[] = [];
  await walkTreeNoFollow(root, (e) => {
    seen.push({ path: e.path.subarray(root.length).toString('latin1'), kind: e.kind });
    return enter(e) ? 'enter' : 'skip';
  });
  return seen.sort((a, b) => a.path.localeCompare(b.path));
}

describe.runIf(process.platform === 'linux')('walkTreeNoFollow', () => {
  it('visits every name as bytes, never follows a symlink, and reads files through what it opened', async () => {
    const root = tree();
    const outside = tree();
    writeFileSync(join(outside, 'outside.txt'), 'no');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    writeFileSync(join(root, 'a', 'b', 'f.txt'), 'mine\n');
    writeFileSync(Buffer.concat([Buffer.from(join(root, 'a')), Buffer.from('/n\xff', 'latin1')]), 'odd');
    symlinkSync(outside, join(root, 'link'));
    const seen = await walkAll(root);
    expect(seen).toEqual([
      { path: '/a', kind: 'dir' },
      { path: '/a/b', kind: 'dir' },
      { path: '/a/b/f.txt', kind: 'file' },
      { path: '/a/n\xff', kind: 'file' },
      { path: '/link', kind: 'symlink' },
    ]);
    let content = '';
    await walkTreeNoFollow(root, async (e) => {
      if (e.name.toString() === 'f.txt') {
        const handle = await openWalkedFile(e);
        content = (await handle.readFile()).toString();
        await handle.close();
      }
      return 'enter' as const;
    });
    expect(content).toBe('mine\n');
    // `skip` keeps out of a directory, `stop` ends the walk
    expect((await walkAll(root, (e) => e.name.toString() !== 'a')).map((s) => s.path)).toEqual(['/a', '/link']);
  });

  it('walks a tree deeper than PATH_MAX, which no path can open', async () => {
    const root = tree();
    const name = 'd'.repeat(200);
    const depth = 30; // 30 × 201 bytes: past 4096
    // made and removed through relative paths: a whole path this long is refused by the kernel
    const py = (body: string) => execFileSync('python3', ['-c', `import os, sys\nos.chdir(sys.argv[1])\nn = sys.argv[2]\n${body}`, root, name]);
    py(`for i in range(${depth}):\n    os.mkdir(n); os.chdir(n)\nopen('leaf.txt', 'w').write('deep')`);
    const leaf = `${`/${name}`.repeat(depth)}/leaf.txt`;
    expect(root.length + leaf.length).toBeGreaterThan(4096);
    const seen = await walkAll(root);
    expect(seen).toHaveLength(depth + 1);
    expect(seen.at(-1)).toEqual({ path: leaf, kind: 'file' });
    py(`for i in range(${depth}):\n    os.chdir(n)\nos.unlink('leaf.txt')\nfor i in range(${depth}):\n    os.chdir('..'); os.rmdir(n)`);
  });

  it('refuses a directory swapped for a symlink between its listing and its entry, and visits nothing beyond', async () => {
    const root = tree();
    const outside = tree();
    mkdirSync(join(outside, 'SECRET-NAME'));
    mkdirSync(join(root, 'd'));
    writeFileSync(join(root, 'd', 'plain.txt'), 'x');
    const seen: string[] = [];
    const walked = walkTreeNoFollow(root, (e) => {
      seen.push(e.path.toString());
      if (e.name.toString() === 'd') {
        // the host changes after the walk judged `d` and before it goes in
        renameSync(join(root, 'd'), join(root, 'd-real'));
        symlinkSync(outside, join(root, 'd'));
      }
      return 'enter';
    });
    await expect(walked).rejects.toMatchObject({ code: 'opened-elsewhere' });
    expect(seen.join('\n')).not.toContain('SECRET-NAME');
  });

  it('refuses a root that is a symlink, a file, or missing, each by its rule', async () => {
    const root = tree();
    writeFileSync(join(root, 'file'), 'x');
    symlinkSync(root, join(root, 'self'));
    await expect(walkTreeNoFollow(join(root, 'self'), () => 'enter')).rejects.toMatchObject({ code: 'final-symlink' });
    await expect(walkTreeNoFollow(join(root, 'file'), () => 'enter')).rejects.toMatchObject({ code: 'not-a-directory' });
    await expect(walkTreeNoFollow(join(root, 'none'), () => 'enter')).rejects.toMatchObject({ code: 'missing' });
    await expect(walkTreeNoFollow(`/proc/${process.pid}`, () => 'enter')).rejects.toMatchObject({ code: 'kernel-file-system' });
  });

  it('as root: a kernel file system bound inside the tree is refused when entered, and a file bound from /proc when opened', async () => {
    if (process.getuid?.() !== 0) return; // mounting needs root; CI runs as root
    const root = tree();
    mkdirSync(join(root, 'bound'));
    writeFileSync(join(root, 'one'), '');
    execFileSync('mount', ['--bind', `/proc/${process.pid}`, join(root, 'bound')]);
    execFileSync('mount', ['--bind', `/proc/${process.pid}/environ`, join(root, 'one')]);
    try {
      await expect(walkAll(root)).rejects.toMatchObject({ code: 'kernel-file-system' });
      const opened = walkTreeNoFollow(root, async (e) => {
        if (e.kind === 'file') await (await openWalkedFile(e)).close();
        return 'skip' as const;
      });
      await expect(opened).rejects.toMatchObject({ code: 'kernel-file-system' });
    } finally {
      execFileSync('umount', [join(root, 'bound')]);
      execFileSync('umount', [join(root, 'one')]);
    }
  });
});

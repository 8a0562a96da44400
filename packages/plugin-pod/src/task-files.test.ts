// A task's files are listed by descriptor and read without following a link: real files, a real
// process swapping a file for a symlink. Found by an attack: 40 nested 200-character directories
// hid files from `pod files`; a symlink swapped in after the check was followed by the preview.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { openDirNoFollow, removeTreeAt } from '@aalis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskRecord } from './task.js';
import { listTaskFiles, readTaskFile } from './task-files.js';

let top: string;
let child: ChildProcess | undefined;

beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), 'h86-files-'));
  chmodSync(top, 0o700);
});
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  removeAll(top);
});

/** Removes a test's tree by descriptor: it may hold a path longer than PATH_MAX, which `rm -r` by path cannot reach. */
function removeAll(dir: string): void {
  const parent = openDirNoFollow(dirname(dir));
  if (parent === undefined) return;
  try {
    removeTreeAt(parent, Buffer.from(basename(dir)));
  } finally {
    closeSync(parent);
  }
}

function task(): TaskRecord {
  const base = join(top, 'root', 'pod-1');
  mkdirSync(join(base, 'work'), { recursive: true });
  return { id: 'pod-1', task: 't', session: 's', root: join(top, 'root'), dirs: { base, work: join(base, 'work'), scratch: join(base, '.pod', 'scratch'), meta: join(base, '.pod') }, state: 'succeeded', createdAt: 0, steps: 0, progress: '' };
}

describe('listTaskFiles', () => {
  it('lists a file below a path longer than PATH_MAX', async () => {
    const t = task();
    const name = 'n'.repeat(200);
    execFileSync('python3', ['-c', `import os\nos.chdir(${JSON.stringify(t.dirs.work)})\nfor i in range(40):\n  os.mkdir(${JSON.stringify(name)}); os.chdir(${JSON.stringify(name)})\nopen('leaf','w').write('x')\n`]);
    writeFileSync(join(t.dirs.work, 'z.txt'), 'z');
    const files = await listTaskFiles(t);
    const leaf = files.find((f) => f.path.endsWith('/leaf'));
    expect(leaf).toMatchObject({ kind: 'file', size: 1 });
    expect(leaf?.path.split('/')).toHaveLength(41);
    expect(files.filter((f) => f.kind === 'dir')).toHaveLength(40);
    expect(files.some((f) => f.unlisted !== undefined)).toBe(false);
    expect(files.at(-1)?.path).toBe('z.txt');
  });
});

describe('readTaskFile', () => {
  it('never reads through a symlink swapped in after the check', async () => {
    const t = task();
    const secret = join(top, 'secret.txt');
    writeFileSync(secret, 'ROOT ONLY\n');
    chmodSync(secret, 0o600);
    writeFileSync(join(t.dirs.work, 'f'), 'ok\n');
    const swap = [
      'import os',
      `os.chdir(${JSON.stringify(t.dirs.work)})`,
      'while True:',
      `  os.symlink(${JSON.stringify(secret)}, 't'); os.rename('t', 'f')`,
      "  open('u', 'w').write('ok\\n'); os.rename('u', 'f')",
    ].join('\n');
    child = spawn('python3', ['-c', swap], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 50));
    const seen = new Set<string>();
    for (let i = 0; i < 1500; i++) {
      const read = await readTaskFile(t, join(t.dirs.work, 'f')).catch((e: { code?: string }) => ({ content: `refused:${e.code}` }));
      seen.add(read.content);
    }
    expect([...seen].filter((c) => c.includes('ROOT ONLY'))).toEqual([]);
    expect(seen.has('ok\n')).toBe(true);
  }, 60_000);
});

// `pod clean` removes a task's directory by descriptor: real files, a real swapping process. Found
// by an attack: removal by path followed `work/a` after another user swapped it for a symlink to
// a directory outside the pod, and deleted what was there.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { openDirNoFollow, removeTreeAt } from '@aalis/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CleanupDeps, cleanTasks, removeTaskDir } from './task-cleanup.js';
import type { TaskRecord } from './task.js';

let top: string;
let children: ChildProcess[] = [];

beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), 'h86-clean-'));
  chmodSync(top, 0o700);
});
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  children = [];
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

/** A finished task whose directory is `<top>/root/<id>` with a `work/` inside. */
function taskIn(root: string, id: string): TaskRecord {
  const base = join(root, id);
  mkdirSync(join(base, 'work'), { recursive: true });
  mkdirSync(join(base, '.pod'), { recursive: true });
  return { id, task: 't', session: 's', root, dirs: { base, work: join(base, 'work'), scratch: join(base, '.pod', 'scratch'), meta: join(base, '.pod') }, state: 'succeeded', createdAt: 0, steps: 0, progress: '' };
}

function depsOf(tasks: TaskRecord[]): CleanupDeps {
  return { tasks: () => tasks, task: (id) => tasks.find((t) => t.id === id)!, workspacesOf: () => [], removed: () => {}, save: async () => {} };
}

/** A directory outside the pod holding `n` files that must survive. */
function victim(n: number): string {
  const dir = join(top, 'victim');
  mkdirSync(dir);
  for (let i = 0; i < n; i++) writeFileSync(join(dir, `f${i}`), 'keep\n');
  return dir;
}

describe('removeTaskDir', () => {
  it('removes a tree holding a symlink to an outside directory, and nothing outside', async () => {
    const outside = victim(20);
    const root = join(top, 'root');
    const task = taskIn(root, 'pod-1');
    symlinkSync(outside, join(task.dirs.work, 'link'));
    mkdirSync(join(task.dirs.work, 'd', 'e'), { recursive: true });
    writeFileSync(join(task.dirs.work, 'd', 'e', 'x'), 'x');
    await removeTaskDir(task, depsOf([task]));
    expect(existsSync(task.dirs.base)).toBe(false);
    expect(readdirSync(outside)).toHaveLength(20);
    expect(task.cleanedAt).toBeDefined();
  });

  it('deletes nothing outside while another process swaps a directory and a symlink inside the tree', async () => {
    const outside = victim(400);
    const root = join(top, 'root');
    // several rounds: each one a fresh tree of many files and a process swapping work/a (a
    // directory) with work/b (a symlink to the victim) as fast as it can
    for (let round = 0; round < 6; round++) {
      const task = taskIn(root, `pod-${round}`);
      const a = join(task.dirs.work, 'a');
      mkdirSync(a);
      for (let i = 0; i < 400; i++) writeFileSync(join(a, `f${i}`), '');
      symlinkSync(outside, join(task.dirs.work, 'b'));
      // swap a and b; whatever the removal unlinked, put back (a link to the victim, a directory)
      const swap = [
        'import os',
        `os.chdir(${JSON.stringify(task.dirs.work)})`,
        'def step(f):',
        '  try: f()',
        '  except OSError: pass',
        'while True:',
        "  step(lambda: os.rename('a', 't')); step(lambda: os.rename('b', 'a')); step(lambda: os.rename('t', 'b'))",
        "  names = [n for n in ('a', 'b', 't') if os.path.lexists(n)]",
        "  free = [n for n in ('a', 'b') if n not in names]",
        `  if free and not any(os.path.islink(n) for n in names): step(lambda: os.symlink(${JSON.stringify(outside)}, free[0]))`,
        '  elif free: step(lambda: os.mkdir(free[0]))',
      ].join('\n');
      const child = spawn('python3', ['-c', swap], { stdio: 'ignore' });
      children.push(child);
      await new Promise((r) => setTimeout(r, 30));
      await removeTaskDir(task, depsOf([task])).catch(() => {});
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      rmSync(task.dirs.base, { recursive: true, force: true, maxRetries: 0 });
      expect(readdirSync(outside).length, `round ${round}`).toBe(400);
    }
  }, 60_000);

  it('removes nothing outside when a directory on the way is swapped for a link after the check', async () => {
    const root = join(top, 'root');
    const task = taskIn(join(root, 'sub'), 'pod-s');
    const task2 = { ...task, root };
    // the outside place holds a directory of the same name: a removal by path would empty it
    const elsewhere = join(top, 'elsewhere');
    mkdirSync(join(elsewhere, 'pod-s'), { recursive: true });
    writeFileSync(join(elsewhere, 'pod-s', 'keep'), 'keep\n');
    // the swap lands between the real-path check and the removal (the moment the workspaces are asked for)
    const deps = {
      ...depsOf([task2]),
      workspacesOf: () => {
        renameSync(join(root, 'sub'), join(root, 'sub-away'));
        symlinkSync(elsewhere, join(root, 'sub'));
        return [];
      },
    };
    await expect(removeTaskDir(task2, deps)).rejects.toMatchObject({ code: 'bad-sandbox-root' });
    expect(readdirSync(join(elsewhere, 'pod-s'))).toEqual(['keep']);
    expect(task2.cleanedAt).toBeUndefined();
  });

  it('leaves a task directory that was replaced since the pod made it', async () => {
    const root = join(top, 'root');
    const task = taskIn(root, 'pod-r');
    const st = statSync(task.dirs.base);
    const kept = { ...task, dirs: { ...task.dirs, id: { dev: st.dev, ino: st.ino } } };
    renameSync(task.dirs.base, join(root, 'moved'));
    mkdirSync(task.dirs.base);
    writeFileSync(join(task.dirs.base, 'not-the-pods'), 'x');
    await expect(removeTaskDir(kept, depsOf([kept]))).rejects.toMatchObject({ code: 'bad-sandbox-root' });
    expect(existsSync(join(task.dirs.base, 'not-the-pods'))).toBe(true);
  });
});

describe('cleanTasks', () => {
  it('counts a task whose directory was already removed by hand as cleaned', async () => {
    const root = join(top, 'root');
    const task = taskIn(root, 'pod-gone');
    const st = statSync(task.dirs.base);
    const kept = { ...task, dirs: { ...task.dirs, id: { dev: st.dev, ino: st.ino } } };
    rmSync(task.dirs.base, { recursive: true });
    expect(await cleanTasks({ all: true }, depsOf([kept]))).toMatchObject({ cleaned: ['pod-gone'], failed: [] });
  });


  it('removes a tree deeper than PATH_MAX, and with --all carries on past a task that fails', async () => {
    const root = join(top, 'root');
    const deep = taskIn(root, 'pod-deep');
    // 40 nested 200-character names: the path is about 8 kB, longer than PATH_MAX (4096)
    const name = 'n'.repeat(200);
    const { execFileSync } = await import('node:child_process');
    execFileSync('python3', ['-c', `import os\nos.chdir(${JSON.stringify(deep.dirs.work)})\nfor i in range(40):\n  os.mkdir(${JSON.stringify(name)}); os.chdir(${JSON.stringify(name)})\nopen('leaf','w').write('x')\n`]);
    const broken = taskIn(root, 'pod-broken');
    const ok = taskIn(root, 'pod-ok');
    // pod-broken's directory was swapped for a link: refused, reported, and the others still cleaned
    rmSync(broken.dirs.base, { recursive: true });
    symlinkSync(victim(3), broken.dirs.base);
    const report = await cleanTasks({ all: true }, depsOf([deep, broken, ok]));
    expect(report.cleaned).toEqual(['pod-deep', 'pod-ok']);
    expect(report.failed.map((f) => f.id)).toEqual(['pod-broken']);
    expect(existsSync(deep.dirs.base)).toBe(false);
    expect(existsSync(ok.dirs.base)).toBe(false);
    expect(readdirSync(join(top, 'victim'))).toHaveLength(3);
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { findSystemTool } from './loopback-filter.js';
import { TreeIndex } from './tree-index.js';

/*
 * The tree index and the scan's memo (tree-index.ts, tree-memo.ts): a subtree nothing happened in
 * is not walked again, and every change made a moment before a run is seen by that run. Each case
 * runs real sandboxed processes against a workspace the index already trusts, and checks first
 * that the memo is in use (so the case would fail if the change were missed).
 */

const hasPython = findSystemTool('python3') !== undefined;
let t: Scene;
let sb: ReturnType<typeof createLinuxSandbox>;
beforeAll(() => {
  t = makeScene();
  sb = createLinuxSandbox({ scan: { home: t.home, indexMinEntries: 0 }, undoneDir: join(t.root, 'undone'), landingSweepMs: 0 }); // the scene is small: indexed all the same
});
afterAll(() => t.cleanup());

/** Runs until the index trusts the workspace and a run has been answered from the memo. */
async function memoInUse(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const before = (await sb.hostMemory()).reusedSubtrees;
    await sb.run(req(t, ['true']));
    const m = await sb.hostMemory();
    if (m.indexedTrees > 0 && m.reusedSubtrees > before) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the index never came to trust the workspace');
}

describe.skipIf(!hasPython)('the tree index: a change a moment before a run is seen by it', { timeout: 120_000 }, () => {
  const changes: [string, (dir: string) => string][] = [
    [
      'a .env made deep in a directory nothing else changed in',
      (dir) => {
        writeFileSync(join(dir, 'a/b/c/.env'), 'SECRET=deep\n');
        return join(dir, 'a/b/c/.env');
      },
    ],
    [
      'a directory renamed into the tree from outside the workspace',
      (dir) => {
        const outside = join(t.root, 'moved-in');
        mkdirSync(join(outside, 'pkg/deep'), { recursive: true });
        writeFileSync(join(outside, 'pkg/deep/.env'), 'SECRET=moved\n');
        execFileSync('mv', [join(outside, 'pkg'), join(dir, 'a/b/pkg')]);
        return join(dir, 'a/b/pkg/deep/.env');
      },
    ],
    [
      'the same directory moved out, changed, and moved back',
      (dir) => {
        const away = join(t.root, 'away');
        execFileSync('mv', [join(dir, 'a/b'), away]);
        writeFileSync(join(away, 'c/.env.local'), 'SECRET=roundtrip\n');
        execFileSync('mv', [away, join(dir, 'a/b')]);
        return join(dir, 'a/b/c/.env.local');
      },
    ],
    [
      'a new subtree many levels deep',
      (dir) => {
        mkdirSync(join(dir, 'a/b/c/n/o/p/q/r'), { recursive: true });
        writeFileSync(join(dir, 'a/b/c/n/o/p/q/r/.env'), 'SECRET=new\n');
        return join(dir, 'a/b/c/n/o/p/q/r/.env');
      },
    ],
    [
      'a .env made, then its directory back-dated with touch -d',
      (dir) => {
        execFileSync('touch', ['-d', '2001-01-01 00:00:00', join(dir, 'a/b/c')]);
        writeFileSync(join(dir, 'a/b/c/.env'), 'SECRET=backdated\n');
        execFileSync('touch', ['-d', '2001-01-01 00:00:00', join(dir, 'a/b/c')]);
        return join(dir, 'a/b/c/.env');
      },
    ],
  ];
  it.each(changes.map(([name, change], i) => [name, change, i] as const))('after %s', async (_, change, i) => {
    const dir = join(t.ws, `idx${i}`);
    mkdirSync(join(dir, 'a/b/c'), { recursive: true });
    writeFileSync(join(dir, 'a/b/c/code.js'), 'ok\n');
    await memoInUse();
    const secret = change(dir);
    const r = await sb.run(req(t, ['sh', '-c', `cat '${secret}' 2>&1; true`]));
    expect(r.stdout).not.toContain('SECRET');
    expect(readFileSync(secret, 'utf8')).toContain('SECRET'); // there on the host
  });

  it('doctor says the index is in use (advisory: without python3 the walks read every directory)', async () => {
    const check = (await sb.probe()).checks.find((c) => c.name === 'tree-index');
    expect(check).toMatchObject({ ok: true });
    expect(check?.detail).toMatch(/inotify/);
  });

  it('a landing made by the command in a subtree the index trusted is taken away after the run', async () => {
    mkdirSync(join(t.ws, 'idx-look/x/y'), { recursive: true });
    await memoInUse();
    // the look (after the fact) is what skips trusted subtrees; the overlay judges only what was written
    const look = createLinuxSandbox({ scan: { home: t.home, indexMinEntries: 0 }, undoneDir: join(t.root, 'undone'), landingSweepMs: 0, hostModel: 'look' });
    const r = await look.run(req(t, ['sh', '-c', 'mkdir -p idx-look/x/y/.vscode && echo x > idx-look/x/y/.vscode/tasks.json; true']));
    expect(r.deniedWrites).toContain(join(t.ws, 'idx-look/x/y/.vscode'));
    expect(existsSync(join(t.ws, 'idx-look/x/y/.vscode/tasks.json'))).toBe(false);
  });
});

describe.skipIf(!hasPython)('the tree index itself', { timeout: 60_000 }, () => {
  const ready = async (index: TreeIndex, root: string) => {
    index.watch(root);
    for (let i = 0; i < 200 && index.readyTrees === 0; i++) {
      await index.sync();
      await new Promise((r) => setTimeout(r, 20));
    }
    return (await index.sync())!;
  };

  it('says which subtrees changed since a generation: the directory, its ancestors, not its siblings', async () => {
    const root = join(t.root, 'tree');
    mkdirSync(join(root, 'x/y'), { recursive: true });
    mkdirSync(join(root, 'z'), { recursive: true });
    const index = TreeIndex.start()!;
    try {
      const g = await ready(index, root);
      expect(index.unchangedSince(join(root, 'x/y'), g)).toBe(true);
      writeFileSync(join(root, 'x/y/f'), '');
      await index.sync();
      expect(index.unchangedSince(join(root, 'x/y'), g)).toBe(false);
      expect(index.unchangedSince(join(root, 'x'), g)).toBe(false); // an ancestor
      expect(index.unchangedSince(root, g)).toBe(false);
      expect(index.unchangedSince(join(root, 'z'), g)).toBe(true); // a sibling
    } finally {
      index.close();
    }
  });
  const canUnshare = process.getuid?.() === 0 && findSystemTool('unshare') !== undefined;
  it.skipIf(!canUnshare)('trusts nothing in a tree a mount was made in since (its watches cannot see into the mount)', async () => {
    const root = join(t.root, 'mounted');
    mkdirSync(join(root, 'x/y'), { recursive: true });
    mkdirSync(join(root, 'z'), { recursive: true });
    const child = join(import.meta.dirname, 'tree-index.child.testing.ts');
    const r = await execa(findSystemTool('unshare')!, ['-m', '--propagation', 'private', process.execPath, '--import', 'tsx', child, root], {
      cwd: join(import.meta.dirname, '..'),
      reject: false,
      timeout: 60_000,
    });
    expect(JSON.parse(r.stdout || '{}'), r.stderr).toEqual({ before: true, after: false });
  });
});

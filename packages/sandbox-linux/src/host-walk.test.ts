import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirMovedError } from './dir-cursor.js';
import { walkTree } from './host-walk.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * The pre-run walk keeps a bounded number of open descriptors (issue 13): a tree deeper than the
 * descriptor limit (20,000 here) in the workspace no longer makes every later run fail closed with
 * EMFILE, and a directory moved out from under the walk below its kept descriptors ends the walk,
 * said plainly, instead of being walked as if it were still where it was.
 */

const DEPTH = 20_000;
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

/** `d/d/…/d` (`depth` levels) under `top`, made by relative mkdir + chdir (no path is ever past PATH_MAX), with `files` at the bottom. */
function deepTree(top: string, depth: number, ...files: string[]): void {
  execFileSync('python3', [
    '-c',
    'import os,sys\nos.chdir(sys.argv[1])\nfor _ in range(int(sys.argv[2])):\n  os.mkdir("d"); os.chdir("d")\nfor n in sys.argv[3:]:\n  open(n,"w").write("bottom\\n")',
    top,
    String(depth),
    ...files,
  ]);
}

describe('the walk before a run, in a tree deeper than the descriptor limit', { timeout: 600_000 }, () => {
  it(`a real run after a ${DEPTH}-level tree was made in the workspace runs, and a .env at its bottom is still found`, async () => {
    const top = join(s.ws, 'deep');
    mkdirSync(top);
    deepTree(top, DEPTH, '.env');
    const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0 });
    // inside: go down by relative chdir as far as the mounts allow, then try the .env
    const probe = `import os\nos.chdir("deep")\nn = 0\ntry:\n  while n < ${DEPTH}:\n    os.chdir("d"); n += 1\n  print(open(".env").read().strip())\nexcept OSError as e:\n  print("stopped", n, e.errno)`;
    const r = await sb.run(req(s, ['python3', '-c', probe], { timeoutMs: 300_000 }));
    expect(r.stderr).not.toMatch(/EMFILE/);
    expect(r.exitCode, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout).toMatch(/^stopped \d+ \d+\n$/);
    expect(r.stdout).not.toMatch(/bottom/);
  });
});

describe('a directory moved while the walk is under it', () => {
  it('ends the walk with DirMovedError (dir-moved), said plainly, once the walk climbs back past it', () => {
    const root = join(s.root, 'moved');
    mkdirSync(root);
    deepTree(root, 80, 'leaf');
    mkdirSync(join(root, 'elsewhere'));
    // a directory 70 levels down (below the descriptors the walk keeps) moved out while the walk
    // is at the bottom: going back up through `..` would reach `elsewhere`, not its old parent
    const sixty = join(root, ...Array<string>(69).fill('d'));
    const seen: string[] = [];
    let moved = false;
    const walk = () =>
      walkTree(root, {
        entry: (e) => {
          seen.push(e.path);
          if (!moved && e.name.toString() === 'leaf') {
            renameSync(join(sixty, 'd'), join(root, 'elsewhere', 'd'));
            moved = true;
          }
          return e.type === 'dir';
        },
        unreadable: () => undefined,
      });
    let err: unknown;
    try {
      walk();
    } catch (e) {
      err = e;
    }
    expect(moved).toBe(true);
    expect(err).toBeInstanceOf(DirMovedError);
    expect((err as DirMovedError).code).toBe('dir-moved');
    expect((err as Error).message).toMatch(/was moved \(or removed\) while the walk of the host was under it/);
    // nothing under `elsewhere` was walked as if it were the old place
    expect(seen.filter((p) => p.includes('/elsewhere/'))).toEqual([]);
  });

  it('a tree walked without a move is walked whole (every level once, the bottom file too)', () => {
    const root = join(s.root, 'whole');
    mkdirSync(root);
    deepTree(root, 300, 'leaf');
    writeFileSync(join(root, 'top'), '');
    const seen: string[] = [];
    const entry = (e: { path: string; type: string }) => {
      seen.push(e.path);
      return e.type === 'dir';
    };
    const n = walkTree(root, { entry, unreadable: () => undefined });
    expect(n).toBe(302);
    expect(seen.filter((p) => p.endsWith('/leaf'))).toHaveLength(1);
  });
});

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { livePlaceholders, RunDir } from './run-dir.js';

let parent: string;
let workspace: string;

beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), 'aalis-rundir-test-'));
  workspace = mkdtempSync(join(tmpdir(), 'aalis-rundir-ws-'));
});

afterEach(() => {
  rmSync(parent, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

/** An overlay run's folder as the runs leave it: per root an upper, a lower and a work dir whose inner dir the kernel left mode 000. */
function layersLikeARun(dir: RunDir, roots: number): void {
  const layers = dir.prepareLayersDir();
  for (let i = 0; i < roots; i++) {
    for (const d of ['upper', 'lower', 'work/work']) mkdirSync(join(layers, String(i), d), { recursive: true, mode: 0o700 });
    writeFileSync(join(layers, String(i), 'upper', 'written'), 'x');
    // a name that is not UTF-8, as a command can write one
    writeFileSync(Buffer.concat([Buffer.from(join(layers, String(i), 'upper/')), Buffer.from([0x66, 0xff, 0x6f])]), 'y');
    chmodSync(join(layers, String(i), 'work', 'work'), 0o000);
  }
}

describe('RunDir.dispose', () => {
  it('removes the whole run folder, mode-000 work dirs and names that are not UTF-8 included', async () => {
    const dir = new RunDir(parent);
    dir.prepareEmptyFile();
    dir.prepareEmptyDir();
    layersLikeARun(dir, 3);
    await dir.dispose();
    expect(readdirSync(parent)).toEqual([]);
  });

  it('lets the event loop run while it removes the folder (the daemon answers other calls meanwhile)', async () => {
    const dir = new RunDir(parent);
    layersLikeARun(dir, 10);
    let ranDuring = false;
    setImmediate(() => {
      ranDuring = existsSync(dir.path);
    });
    await dir.dispose();
    // the callback ran while the folder was still there: the removal did not hold the loop
    expect(ranDuring).toBe(true);
    expect(existsSync(dir.path)).toBe(false);
  });

  it('removes its placeholders before it returns, so a run that takes the same placeholder next never sees it vanish', async () => {
    const first = new RunDir(parent);
    const p = { path: join(workspace, '.git') };
    first.addPlaceholders([p]);
    const second = new RunDir(parent);
    second.addPlaceholders([p]); // a share of the same placeholder
    const firstGone = first.dispose();
    expect(existsSync(p.path)).toBe(true); // the second run still relies on it
    await firstGone;
    expect(livePlaceholders().has(p.path)).toBe(true);
    const secondGone = second.dispose();
    expect(existsSync(p.path)).toBe(false); // gone synchronously, before the folder's removal
    expect(livePlaceholders().has(p.path)).toBe(false);
    await secondGone;
    expect(readdirSync(parent)).toEqual([]);
  });

  // Seen with 8 concurrent daemon calls: a run whose scan was posted before another run made the
  // `.git` placeholder took it for a repository and placed `.git/hooks` in it; the first run's
  // removal of `.git` then failed (not empty), and the next run planning `.git` failed with EEXIST.
  it('a placeholder another run placed one inside is taken over by the next run, and removed with the last', async () => {
    const git = { path: join(workspace, '.git') };
    const hooks = { path: join(workspace, '.git', 'hooks') };
    const a = new RunDir(parent);
    a.addPlaceholders([git]);
    const c = new RunDir(parent); // its scan saw `.git` as a directory of the workspace
    c.addPlaceholders([hooks]);
    await a.dispose(); // `.git` is not empty: it stays, ours
    expect(existsSync(git.path)).toBe(true);
    expect(livePlaceholders().has(git.path)).toBe(true); // the next scan plans it again
    const b = new RunDir(parent);
    b.addPlaceholders([git]); // threw EEXIST
    await c.dispose();
    expect(existsSync(git.path)).toBe(true); // b relies on it
    await b.dispose();
    expect(readdirSync(workspace)).toEqual([]);
    expect(livePlaceholders().size).toBe(0);
  });

  it('a placeholder left because another run placed one inside goes when that one does', async () => {
    const git = { path: join(workspace, '.git') };
    const a = new RunDir(parent);
    a.addPlaceholders([git]);
    const c = new RunDir(parent);
    c.addPlaceholders([{ path: join(workspace, '.git', 'hooks') }]);
    await a.dispose();
    await c.dispose();
    // it stayed on the host for good before
    expect(readdirSync(workspace)).toEqual([]);
    expect(livePlaceholders().size).toBe(0);
  });

  it('is a no-op the second time', async () => {
    const dir = new RunDir(parent);
    layersLikeARun(dir, 1);
    await Promise.all([dir.dispose(), dir.dispose()]);
    await dir.dispose();
    expect(readdirSync(parent)).toEqual([]);
  });
});

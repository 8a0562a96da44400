import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { livePlaceholders, RunDir, sweepStaleRunDirs } from './run-dir.js';

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

// The run folders live in a shared temp directory (`/tmp`): another local user can make one there
// whose name says a dead pid. Swept as the daemon's (as root, say), its journal named any empty
// file or folder of the machine for removal, and its layers made this user's runs say writes
// were lost (found by a review of the sweeps: every other sweep checked the owner).
describe.runIf(process.getuid?.() === 0)("sweepStaleRunDirs and another user's folders", () => {
  it("never reads, removes or reports a folder of another user's, whatever its journal names", () => {
    chmodSync(parent, 0o1777);
    const victimDir = join(workspace, 'empty-dir');
    const victimFile = join(workspace, 'empty-file');
    mkdirSync(victimDir);
    writeFileSync(victimFile, '');
    const planted = join(parent, 'aalis-sbx-999999999-1-abcdef');
    mkdirSync(join(planted, 'overlay'), { recursive: true });
    writeFileSync(join(planted, 'journal'), `${JSON.stringify({ path: victimDir })}\n${JSON.stringify({ path: victimFile })}\n`);
    writeFileSync(join(planted, 'overlay', 'started'), '');
    for (const p of [planted, join(planted, 'overlay'), join(planted, 'journal'), join(planted, 'overlay', 'started')]) chownSync(p, 65534, 65534);
    const heard: string[] = [];
    expect(sweepStaleRunDirs(parent, (d) => heard.push(d))).toBe(0);
    expect(existsSync(victimDir)).toBe(true);
    expect(existsSync(victimFile)).toBe(true);
    expect(existsSync(planted)).toBe(true);
    expect(heard).toEqual([]);
    // one of this user's own, of a dead pid, is swept as before
    const own = join(parent, 'aalis-sbx-999999998-1-abcdef');
    mkdirSync(own, { mode: 0o700 });
    writeFileSync(join(own, 'journal'), `${JSON.stringify({ path: victimDir })}\n`);
    expect(sweepStaleRunDirs(parent)).toBe(1);
    expect(existsSync(victimDir)).toBe(false);
  });
});

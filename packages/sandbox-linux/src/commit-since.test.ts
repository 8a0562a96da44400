import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COARSEST_NS, commitSince, markRunStart } from './commit-conflicts.js';
import { makeScene, req, type Scene, untilProcess, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * The start the commit's conflict check compares ctimes against (issue 13): a host edit made
 * during the run must count as changed even where the ctime alone would say otherwise, on a file
 * system that stamps whole seconds and across a step back of the wall clock.
 */

let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const CONFLICT = "changed on the host during the run: the command's version was not committed";
const sec = (ms: number) => Math.floor(ms / 1000);
/** Resolves once the wall clock is early in a second later than `afterMs`'s (an event of the clock, not a guessed delay). */
async function nextSecondStart(afterMs: number): Promise<void> {
  while (sec(Date.now()) <= sec(afterMs) || Date.now() % 1000 > 100) await new Promise((r) => setTimeout(r, 5));
}

/** The ctime of the start stamp in the run's layer folder (`<tmpDir>/<run>/overlay/started`), as soon as it exists. */
async function startStamp(tmpDir: string): Promise<bigint> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    for (const run of readdirSync(tmpDir)) {
      try {
        return lstatSync(join(tmpDir, run, 'overlay', 'started'), { bigint: true }).ctimeNs;
      } catch {
        // not made yet
      }
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error('no run stamped its start within 60 s');
}

const canLoop = process.getuid?.() === 0 && existsSync('/dev/loop-control') && existsSync('/usr/sbin/mkfs.ext4');

describe.skipIf(!canLoop)('a workspace on a file system that stamps whole seconds (ext4, 128-byte inodes)', { timeout: 300_000 }, () => {
  let mnt = '';
  beforeAll(() => {
    const img = join(s.root, 'coarse.img');
    mnt = mkdtempSync(join(s.root, 'coarse-'));
    execFileSync('truncate', ['-s', '32M', img]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-I', '128', img]);
    execFileSync('mount', ['-o', 'loop', img, mnt]);
  });
  afterAll(() => {
    if (mnt) execFileSync('umount', [mnt]);
  });

  it('a host edit after the start whose ctime is before the start stamp is a conflict: the host version stays', async () => {
    const ws = join(mnt, 'ws');
    mkdirSync(ws);
    const file = join(ws, 'h.txt');
    writeFileSync(file, 'probe\n');
    expect(lstatSync(file, { bigint: true }).ctimeNs % 1_000_000_000n).toBe(0n); // whole seconds indeed
    const policy = workspacePolicy(s, { write: [ws, s.sessionTmp], unixSockets: [ws, s.sessionTmp] });
    // The race: the host edit lands after the run stamped its start in its layer folder
    // (nanoseconds) but in the same second, so the whole-second ctime is before that stamp. The
    // edit is made the moment the stamp appears, and each try checks that the ctimes really are
    // in that order (a loaded machine may cross a second between them: then it tries again).
    let raced = 0;
    for (let attempt = 0; attempt < 10 && raced === 0; attempt++) {
      writeFileSync(file, 'orig\n');
      await nextSecondStart(Date.now()); // the file's own ctime a second before the start
      const token = `3.0${attempt}71`;
      const tmpDir = mkdtempSync(join(s.root, 'daemon-tmp-')); // a fresh one: its only run's stamp is this run's
      const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, tmpDir, undoneDir: join(s.root, 'undone') });
      const run = sb.run(req(s, ['sh', '-c', `echo command >> h.txt; sleep ${token}`], { policy, cwd: ws, timeoutMs: 60_000 }));
      const stamp = await startStamp(tmpDir);
      writeFileSync(file, 'user\n');
      const edited = lstatSync(file, { bigint: true }).ctimeNs;
      // the command still sleeps: the edit was made before its end, so before the commit
      await untilProcess(token, 30_000);
      const r = await run;
      expect(r.exitCode, r.stderr).toBe(0);
      if (edited >= stamp) continue; // a later second: any stamp catches that
      raced += 1;
      expect(readFileSync(file, 'utf8')).toBe('user\n');
      expect(r.stderr).toContain(`${file} ${CONFLICT}`);
    }
    expect(raced).toBe(1);
  });
});

describe('the start stamp', () => {
  it('a step back of the wall clock during the run is taken off the start', () => {
    const dir = mkdtempSync(join(s.root, 'stamp-'));
    let offset = 50_000_000_000n;
    const clock = () => offset;
    const start = markRunStart(dir, [], clock);
    expect(commitSince(start, clock)).toBe(start.stamp);
    offset -= 5_000_000_000n; // the wall clock stepped back 5 s
    expect(commitSince(start, clock)).toBe(start.stamp - 5_001_000_000n);
    offset += 7_000_000_000n; // and forward again past it: nothing to take off
    expect(commitSince(start, clock)).toBe(start.stamp);
  });

  it("a writable root on the temp's own file system is not touched (its ctime stays, so the next scan can be reused); one on another file system is stamped", () => {
    const dir = mkdtempSync(join(s.root, 'stamp-'));
    const root = mkdtempSync(join(s.root, 'root-'));
    const before = lstatSync(root, { bigint: true }).ctimeNs;
    markRunStart(dir, [root]);
    expect(lstatSync(root, { bigint: true }).ctimeNs).toBe(before);
    if (process.getuid?.() !== 0) return; // a file system of its own needs a mount
    const other = mkdtempSync(join(s.root, 'other-'));
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', other]);
    try {
      const was = lstatSync(other, { bigint: true }).ctimeNs;
      // the kernel's coarse clock past that tick first, so a stamp made there shows as a later ctime
      const tick = join(s.root, 'tick');
      for (let i = 0; i < 1_000_000; i++) {
        writeFileSync(tick, '');
        if (lstatSync(tick, { bigint: true }).ctimeNs > was) break;
      }
      const start = markRunStart(mkdtempSync(join(s.root, 'stamp-')), [other]);
      const now = lstatSync(other, { bigint: true }).ctimeNs;
      expect(now).toBeGreaterThan(was); // a file was made and removed there
      expect(start.stamp).toBeLessThanOrEqual(now);
      expect(readdirSync(other)).toEqual([]);
    } finally {
      execFileSync('umount', [other]);
    }
  });

  it('a writable root where no stamp can be made counts from the coarsest tick before the start; a stamp made there leaves nothing behind', () => {
    const dir = mkdtempSync(join(s.root, 'stamp-'));
    const root = mkdtempSync(join(s.root, 'root-'));
    const own = markRunStart(dir, [root]);
    expect(readdirSync(root)).toEqual([]);
    const dir2 = mkdtempSync(join(s.root, 'stamp-'));
    const missing = markRunStart(dir2, [join(s.root, 'no-such-root')]);
    const mark = lstatSync(join(dir2, 'started'), { bigint: true }).ctimeNs;
    expect(missing.stamp).toBe(mark - COARSEST_NS);
    expect(own.stamp).toBeLessThanOrEqual(lstatSync(join(dir, 'started'), { bigint: true }).ctimeNs);
  });
});

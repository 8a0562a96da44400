import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_MS, ClockStepWatch } from './clock-steps.js';
import { COARSEST_NS, markRunStart, mountsUnder } from './commit-conflicts.js';
import { RunOverlays } from './overlay-run.js';
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

/** A {@link ClockStepWatch} on a clock the test moves; `sampled()` resolves after its timer's next sample. */
function fakeClock() {
  let offset = 50_000_000_000n;
  let waiters: (() => void)[] = [];
  const watch = new ClockStepWatch({
    clock: () => offset,
    everyMs: 5,
    onSample: () => {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
  });
  return {
    watch,
    step: (ns: bigint) => {
      offset += ns;
    },
    sampled: () => new Promise<void>((r) => waiters.push(r)),
  };
}

/** A run's overlays as service.ts makes them (real layer folder, real stamps), with the clock of `watch`. */
function runOverlays(watch: ClockStepWatch): Promise<RunOverlays> {
  const layers = mkdtempSync(join(s.root, 'layers-'));
  const root = mkdtempSync(join(s.root, 'root-'));
  return RunOverlays.create({ unshare: 'unshare', mount: 'mount', umount: 'umount' }, workspacePolicy(s, { write: [root] }), layers, [], watch);
}

describe('a step of the wall clock during the run (the clock read through a parameter; the machine clock is never stepped)', () => {
  it('a step back and forward again while the command runs is seen by the sampling and taken off the start', async () => {
    const c = fakeClock();
    const o = await runOverlays(c.watch);
    o.markStart();
    const stamp = o.since!.ns;
    expect(c.watch.active).toBe(true);
    c.step(-5_000_000_000n); // the wall clock steps back 5 s
    await c.sampled();
    c.step(7_000_000_000n); // and forward again past it before the commit
    await c.sampled();
    // before: only the start and the commit were compared, so this step was not seen at all
    expect(o.since!.ns).toBe(stamp - 5_001_000_000n);
    expect(o.since!.devs.length).toBeGreaterThan(0);
  });

  it('one timer for every open run, stopped once none is open; kept writes keep it going until they are gone', async () => {
    const c = fakeClock();
    const a = await runOverlays(c.watch);
    const b = await runOverlays(c.watch);
    a.markStart();
    b.markStart();
    await a.commit(async () => ({ committed: [], refused: [], conflicts: [], keptAt: {}, failed: [], notes: [] }));
    expect(c.watch.active).toBe(true); // b still runs
    await b.commit(async () => ({ committed: [], refused: [], conflicts: [], keptAt: {}, failed: [], notes: [] }));
    expect(c.watch.active).toBe(false);
    b.keepWatching(); // its refused writes wait for an answer: a step meanwhile counts for their commit
    const before = b.since!.ns;
    c.step(-3_000_000_000n);
    await c.sampled();
    c.step(3_000_000_000n);
    await c.sampled();
    expect(b.since!.ns).toBe(before - 3_001_000_000n);
    b.stopWatching();
    expect(c.watch.active).toBe(false);
  });

  it('what is still missed: a step back and forward again between two samples (at most SAMPLE_MS apart)', () => {
    let offset = 0n;
    const watch = new ClockStepWatch({ clock: () => offset, everyMs: 60_000 }); // no timed sample during this test
    const w = watch.open();
    offset -= 5_000_000_000n;
    offset += 5_000_000_000n;
    expect(w.stepBack()).toBe(0n);
    offset -= 1_000_000_000n; // a step back still in force at the commit is seen by the commit's own sample
    expect(w.stepBack()).toBe(1_000_000_000n);
    w.pause();
    expect(watch.active).toBe(false);
    expect(SAMPLE_MS).toBeLessThanOrEqual(100);
  });
});

describe('the start stamp', () => {
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
    expect(own.devs).toContain(BigInt(lstatSync(root).dev));
    const dir2 = mkdtempSync(join(s.root, 'stamp-'));
    const missing = markRunStart(dir2, [join(s.root, 'no-such-root')]);
    const mark = lstatSync(join(dir2, 'started'), { bigint: true }).ctimeNs;
    expect(missing.stamp).toBe(mark - COARSEST_NS);
    expect(own.stamp).toBeLessThanOrEqual(lstatSync(join(dir, 'started'), { bigint: true }).ctimeNs);
  });

  it('reads mount points from mountinfo as bytes (octal escapes), only strictly under a root', () => {
    const info = Buffer.from('36 35 98:0 / /w/m\\040nt rw - ext4 /dev/x rw\n37 35 98:0 / /w rw - ext4 /dev/y rw\n38 35 98:0 / /wx/a rw - ext4 /dev/z rw\n');
    expect(mountsUnder(['/w'], info).map((b) => b.toString())).toEqual(['/w/m nt']);
  });
});

describe.skipIf(!canLoop)('a file system mounted inside a writable root (ext4, 128-byte inodes: whole seconds)', { timeout: 300_000 }, () => {
  // one loop device per test, attached once: mounting an image file again right after its last
  // umount can find its old loop device still attached ("already mounted")
  const devs: string[] = [];
  const loopDevice = (name: string): string => {
    const img = join(s.root, name);
    execFileSync('truncate', ['-s', '32M', img]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-I', '128', img]);
    const dev = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    devs.push(dev);
    return dev;
  };
  afterAll(() => {
    for (const d of devs) execFileSync('losetup', ['-d', d]);
  });

  it('mounted at the start: stamped on its own (its device known, its whole-second stamp the earliest), nothing left behind; read-only: not stamped', () => {
    const root = mkdtempSync(join(s.root, 'root-'));
    const m = join(root, 'm nt'); // a space: written \040 in mountinfo
    mkdirSync(m);
    execFileSync('mount', [loopDevice('inner-start.img'), m]);
    try {
      const dir = mkdtempSync(join(s.root, 'stamp-'));
      const start = markRunStart(dir, [root]);
      expect(start.devs).toContain(BigInt(lstatSync(m).dev));
      expect(start.stamp % 1_000_000_000n).toBe(0n); // the inner file system's whole second, before the others' nanoseconds
      expect(readdirSync(m).filter((n) => n.startsWith('.aalis'))).toEqual([]);
      execFileSync('mount', ['-o', 'remount,ro', m]);
      const ro = markRunStart(mkdtempSync(join(s.root, 'stamp-')), [root]);
      expect(ro.devs).not.toContain(BigInt(lstatSync(m).dev)); // its entries count from the coarsest tick before
      // the read-only file system as a root itself: the margin is in the start, its device known
      const dir2 = mkdtempSync(join(s.root, 'stamp-'));
      const asRoot = markRunStart(dir2, [m]);
      expect(asRoot.stamp).toBe(lstatSync(join(dir2, 'started'), { bigint: true }).ctimeNs - COARSEST_NS);
      expect(asRoot.devs).toContain(BigInt(lstatSync(m).dev));
    } finally {
      execFileSync('umount', [m]);
    }
  });

  it('mounted inside the workspace during the run: the host file on it edited in the start\'s second is a conflict, the user\'s edit stays', async () => {
    const ws = mkdtempSync(join(s.root, 'mws-'));
    const m = join(ws, 'm');
    mkdirSync(m);
    const file = join(m, 'h.txt');
    const policy = workspacePolicy(s, { write: [ws, s.sessionTmp], unixSockets: [ws, s.sessionTmp] });
    // As for the root-level test above: the edit must land after the start stamp but in its
    // second (so its whole-second ctime is before the stamp); each try checks the order.
    const dev = loopDevice('inner-run.img');
    let raced = 0;
    for (let attempt = 0; attempt < 10 && raced === 0; attempt++) {
      execFileSync('mount', [dev, m]);
      writeFileSync(file, 'orig\n');
      execFileSync('umount', [m]);
      await nextSecondStart(Date.now());
      const token = `3.1${attempt}71`;
      const tmpDir = mkdtempSync(join(s.root, 'daemon-tmp-'));
      const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, tmpDir, undoneDir: join(s.root, 'undone') });
      const run = sb.run(req(s, ['sh', '-c', `echo command > m/h.txt; sleep ${token}`], { policy, cwd: ws, timeoutMs: 60_000 }));
      const stamp = await startStamp(tmpDir);
      // the command has written its version and waits: the host mounts a file system there
      // (after the run chose the overlay and stamped its start: its device was never stamped)
      // and the user edits the file on it
      await untilProcess(token, 30_000);
      execFileSync('mount', [dev, m]);
      let edited: bigint;
      try {
        writeFileSync(file, 'user\n');
        edited = lstatSync(file, { bigint: true }).ctimeNs;
        const r = await run;
        expect(r.exitCode, r.stderr).toBe(0);
        if (edited >= stamp) continue; // a later second: any stamp catches that
        raced += 1;
        expect(edited % 1_000_000_000n).toBe(0n);
        expect(readFileSync(file, 'utf8')).toBe('user\n');
        expect(r.stderr).toContain(`${file} ${CONFLICT}`);
      } finally {
        execFileSync('umount', [m]);
      }
    }
    expect(raced).toBe(1);
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { commitBatch } from './commit-batch.js';
import { wallMinusMonotonic } from './clock-steps.js';
import { HostThread } from './host-thread.js';
import { probeOverlay } from './overlay-mount.js';
import { RunOverlays } from './overlay-run.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * A run's upper layers committed in one job of the host thread (commit-batch.ts): every root as
 * before, each on its own, and one hop for the run instead of one per writable root.
 */

let s: Scene;
beforeAll(async () => {
  s = makeScene();
  expect((await probeOverlay('/tmp')).ok).toBe(true);
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

describe('the commit of a run', { timeout: 120_000 }, () => {
  it('a real run writing under two writable roots: both committed, by one commit job for the run', async () => {
    const other = mkdtempSync(join(s.root, 'other-'));
    const jobs: string[] = [];
    const run = HostThread.prototype.run;
    const spy = vi.spyOn(HostThread.prototype, 'run').mockImplementation(function (this: HostThread, job) {
      jobs.push(job.op);
      return run.call(this, job);
    });
    const sandbox = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
    try {
      const policy = workspacePolicy(s, { write: [s.ws, s.sessionTmp, other] });
      const r = await sandbox.run(req(s, ['sh', '-c', `echo one > one.txt; echo two > '${other}/two.txt'`], { policy }));
      expect(r.exitCode).toBe(0);
      expect(readFileSync(join(s.ws, 'one.txt'), 'utf8')).toBe('one\n');
      expect(readFileSync(join(other, 'two.txt'), 'utf8')).toBe('two\n');
      // before: one `commit` job per writable root (three here), each a hop there and back
      expect(jobs.filter((op) => op === 'commit')).toEqual([]);
      expect(jobs.filter((op) => op === 'commitAll')).toEqual(['commitAll']);
    } finally {
      spy.mockRestore();
      await sandbox.close();
    }
  });

  it('a root that cannot be committed is reported failed on its own; the roots after it are committed', async () => {
    const layers = mkdtempSync(join(s.root, 'layers-'));
    const gone = mkdtempSync(join(s.root, 'gone-'));
    const kept = mkdtempSync(join(s.root, 'kept-'));
    const policy = workspacePolicy(s, { write: [gone, kept] });
    const o = await RunOverlays.create({ unshare: 'unshare', mount: 'mount', umount: 'umount' }, policy, layers, []);
    const [first, second] = o.overlays;
    expect(first?.root).toBe(gone);
    writeFileSync(join(first!.upper, 'a.txt'), 'a\n');
    writeFileSync(join(second!.upper, 'b.txt'), 'b\n');
    rmSync(gone, { recursive: true }); // the host root itself cannot be opened: commitUpper throws
    const report = commitBatch({ policy, overlays: o.overlays, mountPoints: [] });
    expect(report.roots.map((r) => r.ok)).toEqual([false, true]);
    expect(existsSync(join(gone, 'a.txt'))).toBe(false);
    expect(readFileSync(join(kept, 'b.txt'), 'utf8')).toBe('b\n');
  });

  it("the clock is read before each root: a step back since the run's start lowers every root's start stamp, and the lowest offset read is given back", async () => {
    const layers = mkdtempSync(join(s.root, 'layers-'));
    const root = mkdtempSync(join(s.root, 'root-'));
    mkdirSync(join(root, 'd'));
    writeFileSync(join(root, 'd', 'edited.txt'), 'host\n');
    const policy = workspacePolicy(s, { write: [root] });
    const o = await RunOverlays.create({ unshare: 'unshare', mount: 'mount', umount: 'umount' }, policy, layers, []);
    mkdirSync(join(o.overlays[0]!.upper, 'd'));
    writeFileSync(join(o.overlays[0]!.upper, 'd', 'edited.txt'), 'command\n');
    const now = wallMinusMonotonic();
    // stamped as if the run started 10 s from now, and the wall clock stepped back 20 s since: its
    // start is then 10 s ago, and the host's edit (just made) is a change during the run
    const start = { stamp: BigInt(Date.now()) * 1_000_000n + 10_000_000_000n, devs: [] };
    const unstepped = commitBatch({ policy, overlays: o.overlays, mountPoints: [], since: { ns: start.stamp, devs: [] }, aside: join(s.root, 'aside-1') });
    expect(unstepped.roots[0]).toMatchObject({ ok: true, report: { conflicts: [] } }); // the edit is before the stamp: the command's version wins
    expect(readFileSync(join(root, 'd', 'edited.txt'), 'utf8')).toBe('command\n');
    writeFileSync(join(root, 'd', 'edited.txt'), 'host\n');
    mkdirSync(join(o.overlays[0]!.upper, 'd'), { recursive: true }); // the command's write again (the first commit moved it to the host)
    writeFileSync(join(o.overlays[0]!.upper, 'd', 'edited.txt'), 'command\n');
    const stepped = commitBatch({ policy, overlays: o.overlays, mountPoints: [], clock: { start, offsetAtStart: now + 20_000_000_000n, stepBack: 0n }, aside: join(s.root, 'aside-2') });
    expect(stepped.roots[0]).toMatchObject({ ok: true, report: { conflicts: [join(root, 'd', 'edited.txt')] } });
    expect(readFileSync(join(root, 'd', 'edited.txt'), 'utf8')).toBe('host\n');
    expect(stepped.lowestOffset).toBeDefined();
    expect(stepped.lowestOffset! - now).toBeLessThan(1_000_000_000n);
  });
});

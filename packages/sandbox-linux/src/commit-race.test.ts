import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeOverlay } from './overlay-mount.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * Two real sandboxed commands in one workspace writing the same file (issue 13): the run that
 * commits second does not overwrite the first one's file; its result names the conflict
 * (structured, `conflicts`) and where its own version was kept.
 */

let s: Scene;
let tmpDir: string;
beforeAll(async () => {
  s = makeScene();
  tmpDir = join(s.root, 'daemon-tmp');
  mkdirSync(tmpDir);
  expect((await probeOverlay(tmpDir)).ok).toBe(true);
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

/** Whether `marker` is in some run's upper layer: that run has started its command. */
const started = (marker: string) =>
  readdirSync(tmpDir).some((run) => existsSync(join(tmpDir, run, 'overlay')) && readdirSync(join(tmpDir, run, 'overlay')).some((i) => existsSync(join(tmpDir, run, 'overlay', i, 'upper', marker))));

describe('two runs racing on one file', { timeout: 120_000 }, () => {
  it('the later commit is a conflict: the first version stays, the second is kept aside and named in the result', async () => {
    const undone = join(s.root, 'undone');
    const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, tmpDir, undoneDir: undone });
    const race = join(s.ws, 'race.txt');
    // A starts first and writes last; B starts while A runs and commits first
    const a = sb.run(req(s, ['sh', '-c', 'touch started-a; sleep 3; echo A > race.txt; rm started-a'], { policy: workspacePolicy(s) }));
    const end = Date.now() + 30_000;
    while (!started('started-a') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const b = await sb.run(req(s, ['sh', '-c', 'echo B > race.txt'], { policy: workspacePolicy(s) }));
    expect(b.exitCode).toBe(0);
    expect(b.conflicts).toBeUndefined();
    expect(readFileSync(race, 'utf8')).toBe('B\n');
    const ra = await a;
    expect(ra.exitCode).toBe(0);
    expect(readFileSync(race, 'utf8')).toBe('B\n');
    expect(ra.conflicts).toEqual([{ path: race, keptAt: expect.stringContaining(undone) }]);
    expect(readFileSync(ra.conflicts![0]!.keptAt!, 'utf8')).toBe('A\n');
    expect(ra.stderr).toContain(`the command's version is at ${ra.conflicts![0]!.keptAt}`);
    expect(ra.writeDenied).toBe(false); // not a policy refusal: nothing to ask for
  });
});

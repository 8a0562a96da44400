import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, type OverlayScene, overlayScene, req, until, workspacePolicy } from './scene.testing.js';

/*
 * Two real sandboxed commands in one workspace writing the same file (issue 13): the run that
 * commits second does not overwrite the first one's file; its result names the conflict
 * (structured, `conflicts`) and where its own version was kept.
 */

let s: OverlayScene;
beforeAll(async () => {
  s = await overlayScene();
});
afterAll(() => s.cleanup());

describe('two runs racing on one file', { timeout: 120_000 }, () => {
  it('the later commit is a conflict: the first version stays, the second is kept aside and named in the result', async () => {
    const sb = s.sandbox();
    const race = join(s.ws, 'race.txt');
    // A starts first and writes last: it waits at a gate that opens once B has committed, however
    // long B takes (a guessed sleep let a slow B commit after A)
    const bDone = gate(s);
    const a = sb.run(req(s, ['sh', '-c', `touch started-a; ${bDone.wait}; echo A > race.txt; rm started-a`], { policy: workspacePolicy(s) }));
    await until(() => s.inUpper('started-a'), 'run A started');
    const b = await sb.run(req(s, ['sh', '-c', 'echo B > race.txt'], { policy: workspacePolicy(s) }));
    bDone.open();
    expect(b.exitCode).toBe(0);
    expect(b.conflicts).toBeUndefined();
    expect(readFileSync(race, 'utf8')).toBe('B\n');
    const ra = await a;
    expect(ra.exitCode).toBe(0);
    expect(readFileSync(race, 'utf8')).toBe('B\n');
    expect(ra.conflicts).toEqual([{ path: race, keptAt: expect.stringContaining(s.undoneDir) }]);
    expect(readFileSync(ra.conflicts![0]!.keptAt!, 'utf8')).toBe('A\n');
    expect(ra.stderr).toContain(`the command's version is at ${ra.conflicts![0]!.keptAt}`);
    expect(ra.writeDenied).toBe(false); // not a policy refusal: nothing to ask for
  });
});

describe('a folder above a writable root swapped for a symlink while the command runs', { timeout: 120_000 }, () => {
  it("commits nothing there: the root's writes never land where the link points, and the run says so", async () => {
    const cache = join(s.home, '.cache');
    mkdirSync(cache, { recursive: true });
    // where the link points: a folder the host user could not write (the daemon commits as root)
    const elsewhere = join(s.root, 'elsewhere');
    mkdirSync(join(elsewhere, '.cache'), { recursive: true });
    const sb = s.sandbox();
    try {
      const run = sb.run(req(s, ['sh', '-c', `echo pwn > '${join(cache, 'planted')}'; touch started; sleep 1`], { policy: workspacePolicy(s, { write: [s.ws, s.sessionTmp, cache] }) }));
      await until(() => s.inUpper('started'), 'the command started');
      renameSync(s.home, `${s.home}.real`);
      symlinkSync(elsewhere, s.home);
      let r: Awaited<typeof run>;
      try {
        r = await run;
      } finally {
        rmSync(s.home);
        renameSync(`${s.home}.real`, s.home);
      }
      expect(readdirSync(join(elsewhere, '.cache'))).toEqual([]);
      expect(existsSync(join(cache, 'planted'))).toBe(false);
      expect(r.stderr).toContain(`nothing the command wrote under ${cache} was committed: the writable root ${cache} is reached through a symlink now`);
    } finally {
      await sb.close();
    }
  });
});

import { readFileSync } from 'node:fs';
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

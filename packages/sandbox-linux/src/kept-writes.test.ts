import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeptWritesGoneError } from './kept-writes.js';
import { type OverlayScene, overlayScene, req, until, workspacePolicy } from './scene.testing.js';

/*
 * The read-only-first flow without a second run (issue 13): a run asked to keep its refused
 * writes leaves them in its upper layer, off the host; an approval commits exactly those from
 * there, judged again; a rejection, the time limit or close() removes them. Real sandboxed runs
 * under the overlay, as root.
 */

let s: OverlayScene;
beforeAll(async () => {
  s = await overlayScene();
});
afterAll(() => s.cleanup());

const sandbox = (keptWritesMs?: number) => s.sandbox(keptWritesMs ? { keptWritesMs } : {});
const count = () => readFileSync(join(s.ws, 'count.txt'), 'utf8').split('\n').filter((l) => l === 'run').length;
const runFolders = () => s.runFolders();
const SCRIPT = 'echo run >> count.txt; echo hook > lefthook.yml; mkdir -p .github/workflows && echo ci > .github/workflows/ci.yml';

describe('refused writes kept for an answer', { timeout: 120_000 }, () => {
  it('are kept off the host, named exactly, and committed on an approval without running the command again', async () => {
    const sb = sandbox();
    const policy = workspacePolicy(s);
    const r = await sb.run(req(s, ['sh', '-c', SCRIPT], { policy, keepRefused: true }));
    const hook = join(s.ws, 'lefthook.yml');
    const ci = join(s.ws, '.github', 'workflows', 'ci.yml');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.keptWrites?.paths).toEqual(expect.arrayContaining([hook, ci]));
    expect(existsSync(hook)).toBe(false);
    expect(count()).toBe(1);
    // the grants: the policy with both paths writable
    const granted = { ...policy, writeDeny: policy.writeDeny.filter((d) => !('pattern' in d) || !/lefthook|github/.test(d.pattern)) };
    const done = await sb.commitKept(r.keptWrites!.id, granted, [hook, ci]);
    expect(done.refused, done.notes).toEqual([]);
    expect(readFileSync(hook, 'utf8')).toBe('hook\n');
    expect(readFileSync(ci, 'utf8')).toBe('ci\n');
    expect(count()).toBe(1);
    expect(runFolders()).toEqual([]); // the kept layers are gone with the commit
    await expect(sb.commitKept(r.keptWrites!.id, granted, [hook])).rejects.toBeInstanceOf(KeptWritesGoneError);
    execFileSync('rm', ['-rf', hook, join(s.ws, '.github'), join(s.ws, 'count.txt')]);
  });

  it('are judged again when committed: a path the policy still refuses stays off the host', async () => {
    const sb = sandbox();
    const policy = workspacePolicy(s);
    const r = await sb.run(req(s, ['sh', '-c', SCRIPT], { policy, keepRefused: true }));
    const hook = join(s.ws, 'lefthook.yml');
    const done = await sb.commitKept(r.keptWrites!.id, policy, [hook]);
    expect(done.refused).toEqual([hook]);
    expect(existsSync(hook)).toBe(false);
    execFileSync('rm', ['-rf', join(s.ws, 'count.txt')]);
  });

  it('a host entry made after the command started is a conflict at the later commit: the host version stays', async () => {
    const sb = sandbox();
    const policy = workspacePolicy(s);
    const r = await sb.run(req(s, ['sh', '-c', SCRIPT], { policy, keepRefused: true }));
    const hook = join(s.ws, 'lefthook.yml');
    writeFileSync(hook, 'edited while the ask waited\n');
    const granted = { ...policy, writeDeny: policy.writeDeny.filter((d) => !('pattern' in d) || !/lefthook/.test(d.pattern)) };
    const done = await sb.commitKept(r.keptWrites!.id, granted, [hook]);
    expect(done.conflicts).toEqual([hook]);
    expect(readFileSync(hook, 'utf8')).toBe('edited while the ask waited\n');
    execFileSync('rm', ['-rf', hook, join(s.ws, 'count.txt')]);
  });

  it('a rejection (discard), the time limit and close() each remove the kept layers; nothing reaches the host', async () => {
    // a limit long enough that the layers are surely there when the run returns on a loaded
    // machine; the test then waits for them to go (it used to look once, 600 ms later)
    const sb = sandbox(2_000);
    const policy = workspacePolicy(s);
    const a = await sb.run(req(s, ['sh', '-c', SCRIPT], { policy, keepRefused: true }));
    expect(runFolders()).toHaveLength(1);
    await sb.discardKept(a.keptWrites!.id);
    expect(runFolders()).toEqual([]);
    await sb.run(req(s, ['sh', '-c', SCRIPT], { policy, keepRefused: true }));
    expect(runFolders()).toHaveLength(1);
    await until(() => runFolders().length === 0, 'the kept layers went at the time limit');
    const c = sandbox();
    await c.run(req(s, ['sh', '-c', SCRIPT], { policy, keepRefused: true }));
    expect(runFolders()).toHaveLength(1);
    await c.close();
    expect(runFolders()).toEqual([]);
    expect(existsSync(join(s.ws, 'lefthook.yml'))).toBe(false);
    expect(existsSync(join(s.ws, '.github'))).toBe(false);
  });

  it('without keepRefused nothing is kept: the run folder goes after the run', async () => {
    const r = await sandbox().run(req(s, ['sh', '-c', SCRIPT], { policy: workspacePolicy(s) }));
    expect(r.writeDenied).toBe(true);
    expect(r.keptWrites).toBeUndefined();
    await until(() => runFolders().length === 0, 'the run folder went after the run'); // its removal is not waited for by the result
  });

  it('close() waits for the run folders whose removal the results did not wait for', async () => {
    const sb = sandbox();
    await Promise.all([1, 2, 3].map(() => sb.run(req(s, ['sh', '-c', SCRIPT], { policy: workspacePolicy(s) }))));
    await sb.close();
    expect(runFolders()).toEqual([]);
  });
});

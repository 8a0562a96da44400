import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * A daemon killed in the middle of a commit (attack finding 6): a real run whose commit copies
 * (layers on /dev/shm, the workspace elsewhere), the daemon SIGKILLed while it copies; the next
 * start removes its temp and says "partially committed", not "discarded".
 */

let s: Scene;
let tmpDir: string;
beforeAll(() => {
  s = makeScene();
  tmpDir = mkdtempSync('/dev/shm/aalis-h10-');
});
afterAll(() => {
  execFileSync('rm', ['-rf', s.root, tmpDir]);
});

/** The folder the command fills, by its bytes: a plain name, and one that is not UTF-8 (its temp was recorded by a decoded path that named another folder, and stayed; found by an attack). */
const FOLDERS = [Buffer.from('big'), Buffer.from([0x62, 0x69, 0x67, 0xff])];
const inWs = (folder: Buffer, ...rest: Buffer[]) => Buffer.concat([Buffer.from(`${s.ws}/`), folder, ...rest.flatMap((r) => [Buffer.from('/'), r])]);
const temps = (folder: Buffer) => (existsSync(inWs(folder)) ? readdirSync(inWs(folder), { encoding: 'buffer' }).filter((n) => n.toString('latin1').startsWith('.aalis-commit-')) : []);
/**
 * The commit is copying the large file: its temp is in the host directory and already holds data
 * (a.txt's temp lives for an instant only; a kill timed by it can land between the two files).
 */
const copying = (folder: Buffer) => temps(folder).some((n) => {
  try {
    return statSync(inWs(folder, n)).size > 1_000_000;
  } catch {
    return false;
  }
});

describe('a daemon killed mid-commit', { timeout: 180_000 }, () => {
  it.each(FOLDERS.map((f) => [f.toString('latin1'), f] as const))('leaves no stray commit temp once the next daemon starts (folder %j), which says the run was partially committed', async (_shown, folder) => {
    if (statSync('/dev/shm').dev === statSync(s.ws).dev) return;
    mkdirSync(inWs(folder));
    const child = execa(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'commit-journal.child.testing.ts'), JSON.stringify(s), tmpDir, folder.toString('hex')], { cwd: join(import.meta.dirname, '..'), reject: false });
    const end = Date.now() + 120_000;
    while (!copying(folder) && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
    child.kill('SIGKILL');
    await child;
    expect(temps(folder).length).toBe(1); // the kill did land mid-copy: a temp is on the host
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' }); // the next daemon start sweeps
    expect(temps(folder)).toEqual([]);
    expect(readdirSync(tmpDir)).toEqual([]);
    const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    expect(r.stderr).toContain('partially committed');
    expect(r.stderr).not.toContain('could not remove');
    expect(r.stderr).not.toContain('never judged');
  });
});

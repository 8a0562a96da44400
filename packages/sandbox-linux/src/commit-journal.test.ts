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

const temps = () => (existsSync(join(s.ws, 'big')) ? readdirSync(join(s.ws, 'big')).filter((n) => n.startsWith('.aalis-commit-')) : []);
/**
 * The commit is copying the large file: its temp is in the host directory and already holds data
 * (a.txt's temp lives for an instant only; a kill timed by it can land between the two files).
 */
const copying = () => temps().some((n) => {
  try {
    return statSync(join(s.ws, 'big', n)).size > 1_000_000;
  } catch {
    return false;
  }
});

describe('a daemon killed mid-commit', { timeout: 180_000 }, () => {
  it('leaves no stray commit temp once the next daemon starts, which says the run was partially committed', async () => {
    if (statSync('/dev/shm').dev === statSync(s.ws).dev) return;
    mkdirSync(join(s.ws, 'big'));
    const child = execa(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'commit-journal.child.testing.ts'), JSON.stringify(s), tmpDir], { cwd: join(import.meta.dirname, '..'), reject: false });
    const end = Date.now() + 120_000;
    while (!copying() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
    child.kill('SIGKILL');
    await child;
    expect(temps().length).toBe(1); // the kill did land mid-copy: a temp is on the host
    const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' }); // the next daemon start sweeps
    expect(temps()).toEqual([]);
    expect(readdirSync(tmpDir)).toEqual([]);
    const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
    expect(r.stderr).toContain('partially committed');
    expect(r.stderr).not.toContain('never judged');
  });
});

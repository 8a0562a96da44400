import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginCommit, recordAside, recoverCommit } from './commit-journal.js';
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

/*
 * Removals come last (upper-commit.ts runLater): a host entry the command replaced by one of
 * another type is kept beside it under a journalled `.aalis-replaced-*` name until its second pass.
 */
describe('a host entry replaced by one of another type', { timeout: 120_000 }, () => {
  it('a file replaced by a folder, a folder by a file: each in place after the run, nothing left beside', async () => {
    writeFileSync(join(s.ws, 'f'), 'old\n');
    mkdirSync(join(s.ws, 'd'));
    writeFileSync(join(s.ws, 'd', 'x'), 'old\n');
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      const r = await sb.run(req(s, ['sh', '-c', 'rm f && mkdir f && echo new > f/y && rm -rf d && echo new > d'], { policy: workspacePolicy(s) }));
      expect(r.exitCode, r.stderr).toBe(0);
    } finally {
      await sb.close();
    }
    expect(readFileSync(join(s.ws, 'f', 'y'), 'utf8')).toBe('new\n');
    expect(readFileSync(join(s.ws, 'd'), 'utf8')).toBe('new\n');
    expect(readdirSync(s.ws).filter((n) => n.startsWith('.aalis-'))).toEqual([]);
  });

  it('cut off before its second pass: the next start puts it back where its name is free, else leaves it and says where', () => {
    const root = mkdtempSync(join(s.root, 'aside-'));
    const layers = join(root, 'overlay');
    mkdirSync(join(layers, '1', 'upper'), { recursive: true });
    const host = join(root, 'host');
    mkdirSync(host);
    beginCommit(layers);
    const fd = openSync(host, 'r');
    try {
      recordAside(join(layers, '1', 'upper'), fd, '.aalis-replaced-aaaaaaaaaaaa', Buffer.from('free'));
      recordAside(join(layers, '1', 'upper'), fd, '.aalis-replaced-bbbbbbbbbbbb', Buffer.from('taken'));
      recordAside(join(layers, '1', 'upper'), fd, '.aalis-replaced-cccccccccccc', Buffer.from('gone'));
    } finally {
      closeSync(fd);
    }
    mkdirSync(join(host, '.aalis-replaced-aaaaaaaaaaaa'));
    writeFileSync(join(host, '.aalis-replaced-aaaaaaaaaaaa', 'x'), 'old\n');
    writeFileSync(join(host, '.aalis-replaced-bbbbbbbbbbbb'), 'old\n');
    mkdirSync(join(host, 'taken')); // the command's folder had landed
    const r = recoverCommit(layers);
    expect(r.state).toBe('partial');
    expect(readFileSync(join(host, 'free', 'x'), 'utf8')).toBe('old\n');
    expect(lstatSync(join(host, 'taken')).isDirectory()).toBe(true);
    expect(readFileSync(join(host, '.aalis-replaced-bbbbbbbbbbbb'), 'utf8')).toBe('old\n');
    expect(r.left).toHaveLength(1);
    expect(r.left[0]).toContain('taken');
    expect(existsSync(join(host, 'gone'))).toBe(false);
  });
});

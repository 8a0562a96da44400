import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * A daemon killed at a random moment of a commit (an attack: SIGKILL at 0 to 30 ms after the
 * commit's first trace on the host, eight times): the layers beside the workspace (the commit
 * renames) and on /dev/shm (it copies through temps). Whatever the moment, once the next daemon
 * has started: every file is absent or whole, the replaced file is the old one or the new one,
 * no commit temp is left anywhere in the workspace, no run folder is left, and a run cut off
 * after some of its writes reached the host is said to be partially committed.
 */

const COUNT = 120;
const OLD = 'old\n'.repeat(500);
const NEW = 'new\n'.repeat(1250);
let s: Scene;
const dirs: string[] = [];
beforeAll(() => {
  s = makeScene();
});
afterAll(() => {
  execFileSync('rm', ['-rf', s.root, ...dirs]);
});

const expected = (i: number) => {
  const line = `content-${String(i).padStart(3, '0')}\n`;
  return line.repeat(Math.ceil(3000 / line.length)).slice(0, 3000);
};

/** Every entry under `dir` whose name starts like a commit's temp. */
function strayTemps(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, encoding: 'utf8' })) {
    const path = join(dir, e.name);
    if (e.name.startsWith('.aalis-commit-')) out.push(path);
    if (e.isDirectory() && e.name !== '.git') out.push(...strayTemps(path));
  }
  return out;
}

const layersOn = [
  ['beside the workspace (the commit renames)', () => mkdtempSync(join(s.root, 'layers-'))],
  ['on /dev/shm (the commit copies through temps)', () => mkdtempSync('/dev/shm/aalis-kill-')],
] as const;

describe('a daemon killed at a random moment of its commit', { timeout: 300_000 }, () => {
  it.each(layersOn)('leaves every file whole or absent, no temp, and says so, with its layers %s', async (_where, makeTmp) => {
    let cutMidway = 0;
    for (let round = 0; round < 4; round++) {
      const tmpDir = makeTmp();
      dirs.push(tmpDir);
      // there before the run: each file is committed on its own (a new folder goes over whole)
      rmSync(join(s.ws, 'many'), { recursive: true, force: true });
      mkdirSync(join(s.ws, 'many'));
      writeFileSync(join(s.ws, 'edit.txt'), OLD);
      const child = execa(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'commit-kill.child.testing.ts'), JSON.stringify(s), tmpDir, String(COUNT)], { cwd: join(import.meta.dirname, '..'), reject: false });
      // the commit's first trace on the host: an entry in the folder (nothing writes the host before it)
      const end = Date.now() + 120_000;
      let ended = false;
      void child.then(() => (ended = true));
      while (readdirSync(join(s.ws, 'many')).length === 0 && !ended && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
      // later each round: the first land in the commit's first files, the last may find it done
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * [4, 8, 15, 30][round]!)));
      child.kill('SIGKILL');
      const { stdout } = await child;
      const finished = stdout.includes('committed');
      const next = createLinuxSandbox({ tmpDir, hostModel: 'overlay' }); // the next daemon start sweeps
      const r = await next.run(req(s, ['true'], { policy: workspacePolicy(s) }));
      await next.close();
      const present = existsSync(join(s.ws, 'many')) ? readdirSync(join(s.ws, 'many')).filter((n) => /^\d{3}\.txt$/.test(n)) : [];
      for (const name of present) expect(readFileSync(join(s.ws, 'many', name), 'utf8'), name).toBe(expected(Number(name.slice(0, 3))));
      expect([OLD, NEW]).toContain(readFileSync(join(s.ws, 'edit.txt'), 'utf8'));
      expect(strayTemps(s.ws)).toEqual([]);
      expect(readdirSync(tmpDir)).toEqual([]);
      const all = present.length === COUNT && readFileSync(join(s.ws, 'edit.txt'), 'utf8') === NEW;
      if (!finished && present.length > 0 && !all) {
        cutMidway++;
        expect(r.stderr, `round ${round}: ${present.length} of ${COUNT} committed`).toContain('partially committed');
      }
      expect(r.stderr).not.toContain('could not remove');
    }
    // the attack landed: at least one kill cut the commit between its files
    expect(cutMidway).toBeGreaterThan(0);
  });
});

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepProcessDirs } from './process-dirs.js';

/*
 * A process's own folders in a shared directory (process-dirs.ts): real node processes make one,
 * exit or are killed, and what is left is looked at.
 */

const parent = mkdtempSync(join(tmpdir(), 'aalis-process-dirs-test-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));
const PREFIX = 'aalis-test-own-';

/** A node process that makes its folder in `parent`, says where, and then exits (`exit`) or waits to be killed. */
function maker(then: 'exit' | 'wait'): { child: ChildProcess; dir: Promise<string> } {
  const module = join(import.meta.dirname, 'process-dirs.ts');
  const script = `import { makeProcessDir } from ${JSON.stringify(module)}; console.log(makeProcessDir(${JSON.stringify(parent)}, ${JSON.stringify(PREFIX)}));${then === 'wait' ? ' setInterval(() => {}, 1000);' : ''}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) res(out.trim());
    });
    child.on('exit', (code) => rej(new Error(`the maker ended (${code}) before it said where`)));
  });
  return { child, dir };
}

const exited = (child: ChildProcess) => new Promise<void>((res) => (child.exitCode !== null || child.signalCode !== null ? res() : child.on('exit', () => res())));

describe('a process folder', { timeout: 60_000 }, () => {
  it('is named for its process and goes when the process exits', async () => {
    const { child, dir } = maker('exit');
    const path = await dir;
    await exited(child);
    expect(path.startsWith(join(parent, `${PREFIX}${child.pid}-`))).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it("a killed process's folder goes at the next one's start; a live process's, a symlink, another user's and other names stay", async () => {
    const killed = maker('wait');
    const path = await killed.dir;
    killed.child.kill('SIGKILL');
    await exited(killed.child);
    expect(existsSync(path)).toBe(true); // no exit handler ran
    const live = maker('wait');
    const livePath = await live.dir;
    try {
      expect(existsSync(path)).toBe(false); // the next one swept it before it made its own
      const dead = killed.child.pid!;
      const stale = join(parent, `${PREFIX}${dead}-AbCdEf`);
      mkdirSync(stale);
      const kept = [join(parent, `${PREFIX}${dead}-linkXX`), join(parent, `${PREFIX}${dead}-other`), join(parent, `${PREFIX}AbCdEf`), join(parent, `aalis-test-else-${dead}-AbCdEf`)];
      symlinkSync(livePath, kept[0]!);
      for (const k of kept.slice(1)) mkdirSync(k); // not a name it makes, or another prefix's
      if (process.getuid?.() === 0) {
        const others = join(parent, `${PREFIX}${dead}-NobOdy`);
        mkdirSync(others);
        chownSync(others, 65534, 65534);
        kept.push(others);
      }
      expect(sweepProcessDirs(parent, PREFIX)).toBe(1);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(livePath)).toBe(true);
      for (const k of kept) expect(readdirSync(parent)).toContain(k.slice(parent.length + 1));
    } finally {
      live.child.kill('SIGKILL');
      await exited(live.child);
    }
  });

  it("removes a gone process's folder through the caller's removal when one is given, and keeps it when that removal fails", async () => {
    const killed = maker('wait');
    const path = await killed.dir;
    killed.child.kill('SIGKILL');
    await exited(killed.child);
    const asked: string[] = [];
    expect(
      sweepProcessDirs(parent, PREFIX, (dir) => {
        asked.push(dir);
        throw new Error('a mount inside');
      }),
    ).toBe(0);
    expect(asked).toEqual([path]);
    expect(existsSync(path)).toBe(true);
    expect(sweepProcessDirs(parent, PREFIX, (dir) => rmSync(dir, { recursive: true }))).toBe(1);
    expect(existsSync(path)).toBe(false);
  });

  it('many folders of one process: one exit handler (no warning), every one removed at exit', () => {
    const module = join(import.meta.dirname, 'process-dirs.ts');
    const script = `import { makeProcessDir } from ${JSON.stringify(module)}; for (let i = 0; i < 12; i++) console.log(makeProcessDir(${JSON.stringify(parent)}, ${JSON.stringify(PREFIX)}));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const made = r.stdout.trim().split('\n');
    expect(made).toHaveLength(12);
    expect(r.stderr).not.toMatch(/MaxListeners/);
    for (const dir of made) expect(existsSync(dir)).toBe(false);
  });
});


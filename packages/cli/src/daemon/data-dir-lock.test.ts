// The data directory's lock (data-dir-lock.ts) against a holder it cannot see: a daemon in a pid
// namespace of its own (a container given the same data directory). Its pid names another process
// here, or none, so the lock looked stale and was taken over: two daemons on one data directory.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claimDataDir, DataDirInUseError, LOCK_FILE } from './data-dir-lock.js';

const isRoot = process.getuid?.() === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fresh = () => {
  const d = mkdtempSync('/var/tmp/aalis-lock-');
  dirs.push(d);
  return d;
};

describe('the data directory lock', () => {
  it.skipIf(!isRoot)('held by a daemon in another pid namespace, it is not taken over: refused, saying why', { timeout: 60_000 }, async () => {
    const dir = fresh();
    const child = spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount-proc', process.execPath, '--conditions=aalis-source', '--import', 'tsx', join(import.meta.dirname, 'data-dir-lock.child.testing.ts'), dir], { stdio: ['ignore', 'pipe', 'pipe'], cwd: join(import.meta.dirname, '..', '..') });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        let err = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('\n')) resolve(out);
        });
        child.stderr.on('data', (d) => (err += d));
        child.on('exit', (code) => reject(new Error(`the holder exited ${code}: ${err}`)));
      });
      expect(line).toBe('held 1\n'); // pid 1 there: here, another process
      let error: unknown;
      try {
        claimDataDir(dir)();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DataDirInUseError);
      expect((error as Error).message).toMatch(/another pid namespace/);
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: 1 });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("a lock from before this boot (a machine restarted with a daemon's lock left) is taken over", () => {
    const dir = fresh();
    writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify({ pid: process.pid, start: '1', startedAt: '2020-01-01T00:00:00.000Z', boot: 'another-boot', pidns: 1 })}\n`);
    const release = claimDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, startedAt: expect.not.stringMatching(/^2020/) });
    release();
  });

  it("a lock of this process's own pid but another start (the pid reused) is taken over; an old lock without the new fields is judged as before", () => {
    const dir = fresh();
    writeFileSync(join(dir, LOCK_FILE), `${JSON.stringify({ pid: process.pid, start: '1', startedAt: '2020-01-01T00:00:00.000Z' })}\n`);
    const release = claimDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    release();
  });
});

import { chownSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deploymentDir, serveOnce, startServe } from './serve-process.testing.js';

const isRoot = process.geteuid?.() === 0;
const NOBODY = 65534;

// A daemon's data directory holds its token (root commands for whoever reads it), its grants and
// its audit log: one that another user made first, or a token file another user put there, must
// never be used as it is. The real daemon, started as users start it.
describe('the daemon and a data directory it does not own', { timeout: 90_000 }, () => {
  it.skipIf(!isRoot)('does not start on a data directory another user made first, and writes nothing in it', async () => {
    const dir = deploymentDir();
    const data = join(dir, 'data');
    mkdirSync(join(data, 'daemon'), { recursive: true, mode: 0o777 });
    chownSync(data, NOBODY, NOBODY);
    chownSync(join(data, 'daemon'), NOBODY, NOBODY);
    const r = await serveOnce(['--dir', dir, '--port', '0']);
    expect(r.code, r.stderr).not.toBe(0);
    expect(r.stderr).toContain(`the data directory ${data} belongs to uid ${NOBODY}, not to this user (uid 0)`);
    expect(r.stderr).toContain('fix: ');
    expect(r.stdout).not.toMatch(/console: /);
    expect(readdirSync(join(data, 'daemon'))).toEqual([]);
    expect(readdirSync(data)).toEqual(['daemon']);
  });

  it('does not write its token through a symlink put in its place: it stops, says so, and the target is untouched', async () => {
    const dir = deploymentDir();
    const daemonDir = join(dir, 'data', 'daemon');
    mkdirSync(daemonDir, { recursive: true, mode: 0o700 });
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'not the token\n', { mode: 0o644 });
    symlinkSync(victim, join(daemonDir, 'token'));
    const r = await serveOnce(['--dir', dir, '--port', '0']);
    expect(r.code, r.stderr).not.toBe(0);
    expect(r.stderr).toContain(`${join(daemonDir, 'token')}: refused (a symlink at the final name)`);
    expect(readFileSync(victim, 'utf8')).toBe('not the token\n');
    expect(lstatSync(join(daemonDir, 'token')).isSymbolicLink()).toBe(true);
  });

  it('writes its token and url as new files of its own, 0600: a file linked elsewhere first is replaced, not written in place', async () => {
    const dir = deploymentDir();
    const daemonDir = join(dir, 'data', 'daemon');
    mkdirSync(daemonDir, { recursive: true, mode: 0o700 });
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'not the token\n', { mode: 0o644 });
    linkSync(victim, join(daemonDir, 'token'));
    linkSync(victim, join(daemonDir, 'url'));
    const d = await startServe(dir);
    try {
      expect(readFileSync(victim, 'utf8')).toBe('not the token\n');
      const token = lstatSync(join(daemonDir, 'token'));
      expect(token.isFile()).toBe(true);
      expect(token.mode & 0o777).toBe(0o600);
      expect(token.nlink).toBe(1);
      expect(readFileSync(join(daemonDir, 'token'), 'utf8')).toBe(`${d.token}\n`);
      expect(lstatSync(join(daemonDir, 'url')).nlink).toBe(1);
      expect(readFileSync(join(daemonDir, 'url'), 'utf8')).toBe(`${d.url}\n`);
    } finally {
      await d.stop();
    }
  });
});

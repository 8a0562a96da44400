import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { makeScene, type Scene } from './scene.testing.js';

/*
 * commit-conflicts.test.ts's conflict and xattr cases with the daemon run as `nobody` (the overlay
 * mounted in a user namespace of its own, `userxattr`). Skipped (and so reported) where nobody
 * cannot read this checkout.
 */

const child = join(import.meta.dirname, 'commit-conflicts.child.testing.ts');
const able = canRunAsNobody(child);
let s: Scene;
beforeAll(() => {
  if (!able) return;
  s = makeScene();
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
});
afterAll(() => s?.cleanup());

describe.skipIf(!able)('the commit as an unprivileged user (nobody)', { timeout: 120_000 }, () => {
  it("a host file edited during the run keeps the host version (said); an appended file carries no user.overlay.* xattr", async () => {
    const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s));
    const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 100_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(readFileSync(join(s.ws, 'h.txt'), 'utf8')).toBe('user\n');
    expect(out.conflict.stderr).toContain(`${join(s.ws, 'h.txt')} changed on the host during the run: the command's version was not committed`);
    expect(out.append.exitCode).toBe(0);
    expect(readFileSync(join(s.ws, 'x.txt'), 'utf8')).toBe('x\nmore\n');
    expect(execFileSync('getfattr', ['-P', '-m', '^user\\.overlay\\.', join(s.ws, 'x.txt')], { encoding: 'utf8' })).toBe('');
    // a folder made with no search bit: everything after it is committed too, and it keeps mode 000
    expect(out.locked.stderr).toBe('');
    expect(readFileSync(join(s.ws, 'top.txt'), 'utf8')).toBe('top\n');
    expect(readFileSync(join(s.ws, 'made', 'g2'), 'utf8')).toBe('2\n');
    expect(statSync(join(s.ws, 'made', 'locked')).mode & 0o7777).toBe(0);
    expect(readFileSync(join(s.ws, 'made', 'locked', 'in'), 'utf8')).toBe('in\n'); // read as root
    // a changed host file left unreadable (found by an attack, h104: the daemon could not open its
    // copy-up, and the command's version was not committed): committed, with the command's mode
    expect(out.unreadable.stderr).toBe('');
    expect(readFileSync(join(s.ws, 'w.txt'), 'utf8')).toBe('new\n'); // read as root
    expect(statSync(join(s.ws, 'w.txt')).mode & 0o7777).toBe(0);
    expect(readFileSync(join(s.ws, 'after.txt'), 'utf8')).toBe('after\n');
  });
});

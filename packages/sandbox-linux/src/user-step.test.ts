// An ordinary user's overlay step as python (`user_step`, root-map.helper.ts), which a daemon's
// kept-alive launcher runs in its run's child (`launcher: all`) in place of unshare(1), a shell and
// one mount(8) per writable root. Run here as `nobody`, on real overlays: the mounts are in a mount
// namespace of the step's own, and every failure before the command reads as the shell step's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';
import { OVERLAY_FAILURE } from './overlay-mount.js';
import { USER_STEP_PY } from './root-map.helper.js';
import { SCENE_PARENT } from './scene.testing.js';
import { findPython } from './system-interpreters.js';

const python = findPython();
const able = python !== undefined && canRunAsNobody(python);
let dir: string;
beforeAll(() => {
  if (!able) return;
  dir = mkdtempSync(join(SCENE_PARENT, 'aalis-user-step-'));
  for (const d of ['lower', 'upper', 'work']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'lower', 'a.txt'), 'host\n');
  execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The step as nobody: its operands, then the command. */
function step(...argv: string[]) {
  const [cmd, ...args] = asNobody(python!, '-I', '-S', '-c', USER_STEP_PY, ...argv);
  return execa(cmd!, args, { reject: false, env: { PATH: '/usr/bin:/bin' }, extendEnv: false });
}

describe.skipIf(!able)("an ordinary user's overlay step in python (user_step), as nobody", { timeout: 60_000 }, () => {
  it('mounts the overlay in a mount namespace of its own, as 0 of a user namespace mapped to the user alone, then execs the command', async () => {
    const [lower, upper, work] = ['lower', 'upper', 'work'].map((d) => join(dir, d)) as [string, string, string];
    const script = `cat ${lower}/a.txt; echo new > ${lower}/b.txt; cat /proc/self/uid_map; grep " ${lower} " /proc/self/mountinfo | grep -c overlay`;
    const r = await step(lower, upper, work, '-', '--', '--', '/bin/sh', '-c', script);
    expect({ exit: r.exitCode, stderr: r.stderr }).toEqual({ exit: 0, stderr: '' });
    const [a, map, overlays] = r.stdout.split('\n');
    expect(a).toBe('host');
    expect(map?.trim().split(/\s+/)).toEqual(['0', String(NOBODY), '1']);
    expect(overlays).toBe('1');
    // the write went to the upper layer, not the host; the host's mount table never saw the overlay
    expect(existsSync(join(lower, 'b.txt'))).toBe(false);
    expect(readFileSync(join(upper, 'b.txt'), 'utf8')).toBe('new\n');
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${lower} `);
  });

  it.each([
    ['an overlay that cannot be mounted', ['/nonexistent/lower', '/nonexistent/upper', '/nonexistent/work', '-', '--', '--'], 'cannot mount an overlay on /nonexistent/lower: mount failed: '],
    ['operands without their separators', ['/nonexistent/lower'], 'usage: '],
    ['operands that are not whole', ['/nonexistent/lower', '/nonexistent/upper', '--', '--'], 'the overlay operands are not whole'],
  ])('%s: exit 125, the overlay step\'s line, the command never runs', async (_what, operands, says) => {
    const r = await step(...operands, '/bin/echo', 'RAN');
    expect(r.exitCode).toBe(125);
    expect(r.stdout).toBe('');
    expect(r.stderr.startsWith(`${OVERLAY_FAILURE}${says}`), r.stderr).toBe(true);
  });

  it("a command that cannot be exec'd: the overlay step's line, exit 125", async () => {
    // layers of its own: a volatile overlay's work directory is not mounted twice
    for (const d of ['upper2', 'work2']) mkdirSync(join(dir, d));
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, dir]);
    const [lower, upper, work] = ['lower', 'upper2', 'work2'].map((d) => join(dir, d)) as [string, string, string];
    const r = await step(lower, upper, work, '-', '--', '--', '/nonexistent/program');
    expect(r.exitCode).toBe(125);
    expect(r.stderr).toMatch(new RegExp(`^${OVERLAY_FAILURE}exec /nonexistent/program failed: `));
  });
});

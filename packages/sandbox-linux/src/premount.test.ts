import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { premountHides } from './premount.js';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';
import type { Translation } from './translate.js';

/*
 * The hidden entries the root map's step mounts in bwrap's place (premount.ts): which are taken off
 * bwrap's arguments (a table of argument lists), and what a real sandboxed command then meets.
 */

const E = '/run-dir/empty';
const BWRAP = '/usr/bin/bwrap';
const head = ['--unshare-user', '--cap-drop', 'ALL', '--json-status-fd', '4', '--clearenv', '--args', '7', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev'];
const tail = ['--chdir', '/ws', '--seccomp', '3', '--', 'sh', '-c', 'true'];
type M = Translation['mounts'][number];
const file = (path: string): M => ({ path, state: 'hidden', kind: 'file', why: 'rule' });
const dir = (path: string): M => ({ path, state: 'hidden', kind: 'dir', why: 'rule' });
const hideFile = (p: string) => ['--ro-bind', E, p];
const hideDir = (p: string) => ['--tmpfs', p];

// `middle`: bwrap's mounts, one option and its operands each
const cases: { name: string; mounts: M[]; middle: string[][]; remount: string[]; taken: string[]; bwrap?: string }[] = [
  {
    name: 'a hidden file and directory under / and a writable root are taken, files first',
    mounts: [dir('/home/u/.ssh'), file('/ws/.env')],
    middle: [['--bind', '/ws', '/ws'], hideDir('/home/u/.ssh'), hideFile('/ws/.env')],
    remount: ['/home/u/.ssh'],
    taken: ['f', E, '/ws/.env', 'd', '-', '/home/u/.ssh'],
  },
  {
    name: 'a directory with a carve-out mounted back under it stays with bwrap',
    mounts: [dir('/data/tmp')],
    middle: [hideDir('/data/tmp'), ['--bind', '/data/tmp/s', '/data/tmp/s']],
    remount: ['/data/tmp'],
    taken: [],
  },
  {
    name: 'a directory holding the source of a bind elsewhere stays (the source would be hidden)',
    mounts: [dir('/data')],
    middle: [hideDir('/data'), ['--bind', '/data2/s', '/tmp'], ['--bind', '/data/s', '/elsewhere']],
    remount: ['/data'],
    taken: [],
  },
  {
    name: 'an entry under a fresh file system bwrap mounts (a tmpfs, /proc) stays: the hide would be under it',
    mounts: [dir('/tmp/x'), dir('/proc/y'), file('/var/run2/z')],
    middle: [['--tmpfs', '/tmp'], hideDir('/tmp/x'), hideDir('/proc/y'), ['--tmpfs', '/var/run2'], hideFile('/var/run2/z')],
    remount: ['/tmp/x', '/proc/y'],
    taken: [],
  },
  {
    name: 'an entry under a bind from another place stays; under a bind of the same path it is taken',
    mounts: [file('/tmp/a/.env'), file('/ws/b/.env')],
    middle: [['--bind', '/data/session', '/tmp'], ['--ro-bind', '/ws/b', '/ws/b'], hideFile('/tmp/a/.env'), hideFile('/ws/b/.env')],
    remount: [],
    taken: ['f', E, '/ws/b/.env'],
  },
  {
    name: 'a socket home and the root are never taken; an entry that covers bwrap is not',
    mounts: [{ path: '/run', state: 'hidden', kind: 'dir', why: 'socket-home' }, dir('/opt/tools')],
    middle: [['--tmpfs', '/run'], ['--symlink', '/x', '/run/y'], hideDir('/opt/tools')],
    remount: ['/run', '/opt/tools'],
    taken: [],
    bwrap: '/opt/tools/bwrap',
  },
];

describe('premountHides', () => {
  it.each(cases)('$name', ({ mounts, middle, remount, taken, bwrap }) => {
    const remounts = (paths: readonly string[]) => paths.flatMap((p) => ['--remount-ro', p]);
    const out = premountHides([...head, ...middle.flat(), ...remounts(remount), ...tail], { mounts }, bwrap ?? BWRAP);
    expect(out.hides).toEqual(taken);
    // every argument of a taken entry is gone (its empty-file bind or tmpfs, and its remount), everything else is kept in order
    const gone = new Set(taken.filter((_, i) => i % 3 === 2));
    const hideOf = (op: string[]) => gone.has(op.at(-1)!) && (op[0] === '--tmpfs' || (op[0] === '--ro-bind' && op[1] === E));
    expect(out.args).toEqual([...head, ...middle.filter((op) => !hideOf(op)).flat(), ...remounts(remount.filter((p) => !gone.has(p))), ...tail]);
  });

  it('leaves every argument with bwrap when one is unknown, or when the mounts are on another fd (names not UTF-8)', () => {
    const mounts = [file('/ws/.env')];
    const unknown = [...head, '--overlay-src', '/a', ...hideFile('/ws/.env'), ...tail];
    expect(premountHides(unknown, { mounts }, BWRAP)).toEqual({ args: unknown, hides: [] });
    const onFd = [...head.slice(0, -6), '--args', '6', ...tail];
    expect(premountHides(onFd, { mounts }, BWRAP)).toEqual({ args: onFd, hides: [] });
    const noCommand = [...head, ...hideFile('/ws/.env')];
    expect(premountHides(noCommand, { mounts }, BWRAP)).toEqual({ args: noCommand, hides: [] });
  });
});

const isRoot = process.getuid?.() === 0;
let s: OverlayScene;
beforeAll(async () => {
  if (isRoot) s = await overlayScene();
});
afterAll(() => s?.cleanup());

describe.skipIf(!isRoot)('hidden entries mounted by the root map step (a root daemon)', { timeout: 120_000 }, () => {
  it("the plan hands them to the step, not bwrap; the command meets them empty and read-only, and a carve-out's directory stays with bwrap", async () => {
    const sb = s.sandbox();
    try {
      const request = req(s, ['sh', '-c', 'printf "[%s]" "$(cat .env)"; ls -A "$HOME/.ssh"; (echo x > .env) 2>/dev/null || echo env-refused; (touch "$HOME/.ssh/new") 2>/dev/null || echo ssh-refused; ls "$0"', join(s.data, 'tmp')]);
      const plan = await sb.plan(request);
      const at = plan.argv.findIndex((a) => a.endsWith('/bwrap'));
      const step = plan.argv.slice(0, at);
      const bwrapArgs = plan.argv.slice(at);
      const hides = (kind: string, path: string) => step.some((a, i) => a === kind && step[i + 2] === path);
      expect(hides('f', join(s.ws, '.env'))).toBe(true);
      expect(hides('d', join(s.home, '.ssh'))).toBe(true);
      expect(bwrapArgs.join('\0')).not.toContain(`--tmpfs\0${join(s.home, '.ssh')}`);
      expect(bwrapArgs.join('\0')).toContain(`--tmpfs\0${join(s.data, 'tmp')}`); // the session temp is mounted back under it
      const r = await sb.run(request);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('[]env-refused\nssh-refused\nsession-1\n');
    } finally {
      await sb.close();
    }
  });
});

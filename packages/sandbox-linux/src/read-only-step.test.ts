import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOnlyByStep } from './premount.js';
import { type OverlayScene, overlayScene, req, workspacePolicy } from './scene.testing.js';

/*
 * The host's mounts made read-only by the root map's step rather than by bwrap (premount.ts
 * `readOnlyByStep`, root-map.helper.ts `read_only_tree`): which arguments change (a table), and, as
 * root, that a real sandbox shows the command the same view either way while the kernel still
 * refuses every write outside the writable roots.
 */

const head = ['--unshare-user', '--cap-drop', 'ALL', '--file', '5', '/.aalis-setup-sync', '--clearenv', '--args', '7'];
const tail = ['--chdir', '/ws', '--seccomp', '3', '--', 'sh', '-c', 'true'];
const base = [['--ro-bind', '/', '/'], ['--proc', '/proc'], ['--dev', '/dev']];
const ROOTS = ['/ws', '/ws/sub', '/data/tmp/s', '/home/u/.cache'];

// `middle`: bwrap's mounts after the base, one option and its operands each; `kept`: those left (undefined: the arguments unchanged)
const cases: { name: string; middle: string[][]; kept?: string[][]; root?: string[] }[] = [
  {
    name: "a root's bind over itself goes; the binds of other paths, into other places and of what lies in a root stay",
    middle: [['--bind', '/data/tmp/s', '/tmp'], ['--bind', '/home/u/.cache', '/home/u/.cache'], ['--bind', '/ws', '/ws'], ['--bind', '/ws/.git', '/ws/.git'], ['--ro-bind', '/ws/.git/config', '/ws/.git/config']],
    kept: [['--bind', '/data/tmp/s', '/tmp'], ['--bind', '/ws/.git', '/ws/.git'], ['--ro-bind', '/ws/.git/config', '/ws/.git/config']],
  },
  {
    name: 'a root under a tmpfs, a read-only bind or /dev mounted before it keeps its bind (it would be hidden or read-only without)',
    middle: [['--tmpfs', '/data/tmp'], ['--bind', '/data/tmp/s', '/data/tmp/s'], ['--ro-bind', '/home/u', '/home/u'], ['--bind', '/home/u/.cache', '/home/u/.cache'], ['--bind', '/ws', '/ws'], ['--remount-ro', '/data/tmp']],
    kept: [['--tmpfs', '/data/tmp'], ['--bind', '/data/tmp/s', '/data/tmp/s'], ['--ro-bind', '/home/u', '/home/u'], ['--bind', '/home/u/.cache', '/home/u/.cache'], ['--remount-ro', '/data/tmp']],
  },
  {
    name: "a root in a root: both binds go (the outer one's bind, had it stayed, carries the inner overlay as it is)",
    middle: [['--bind', '/ws', '/ws'], ['--bind', '/ws/sub', '/ws/sub']],
    kept: [],
  },
  {
    name: 'a writable bind from outside the overlay roots: nothing changes (it would be read-only)',
    middle: [['--bind', '/ws', '/ws'], ['--bind', '/srv/shared', '/srv/shared']],
  },
  {
    name: 'a root bound writable by the policy (`--bind / /`): nothing changes',
    root: ['--bind', '/', '/'],
    middle: [['--bind', '/ws', '/ws']],
  },
];

describe('readOnlyByStep', () => {
  it.each(cases)('$name', ({ middle, kept, root }) => {
    const args = [...head, ...(root ?? base[0]!), ...base.slice(1).flat(), ...middle.flat(), ...tail];
    const out = readOnlyByStep(args, ROOTS);
    if (kept === undefined) {
      expect(out).toEqual({ args, readOnly: false });
      return;
    }
    expect(out).toEqual({ args: [...head, '--bind', '/', '/', ...base.slice(1).flat(), ...kept.flat(), ...tail], readOnly: true });
  });

  it('leaves the arguments as they are when one is unknown, or when the mounts are on another fd (names not UTF-8)', () => {
    const unknown = [...head, ...base.flat(), '--overlay-src', '/a', '--bind', '/ws', '/ws', ...tail];
    expect(readOnlyByStep(unknown, ROOTS)).toEqual({ args: unknown, readOnly: false });
    const onFd = [...head.slice(0, -2), '--args', '6', ...tail];
    expect(readOnlyByStep(onFd, ROOTS)).toEqual({ args: onFd, readOnly: false });
  });
});

const isRoot = process.getuid?.() === 0;
let s: OverlayScene;
beforeAll(async () => {
  if (isRoot) s = await overlayScene();
});
afterAll(() => s?.cleanup());

/** The visible mount at each mount point inside (the last one listed there): whether it is read-only, and its nosuid, nodev, noexec. */
function visible(mountinfo: string): Map<string, string> {
  const top = new Map<string, string>();
  for (const line of mountinfo.split('\n').filter(Boolean)) {
    const f = line.split(' ');
    const flags = f[5]!.split(',').filter((o) => ['ro', 'rw', 'nosuid', 'nodev', 'noexec'].includes(o));
    top.set(f[4]!, flags.join(','));
  }
  return top;
}

describe.skipIf(!isRoot)('the host made read-only by the root map step (a root daemon)', { timeout: 180_000 }, () => {
  it('the command sees the same mounts with the same flags as when bwrap made them read-only, and the kernel refuses the same writes', async () => {
    const cache = join(s.home, '.cache');
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(s.home, 'kept.txt'), 'host\n');
    const policy = workspacePolicy(s, { write: [s.ws, s.sessionTmp, cache] });
    const writes = [join(s.home, 'kept.txt'), join(s.home, 'new.txt'), '/etc/aalis-ro-step', join(s.control, 'x'), join(s.tmpDir, 'x'), '/proc/sys/kernel/printk_ratelimit', join(s.ws, 'in-ws.txt'), join(cache, 'in-cache.txt'), '/tmp/in-tmp.txt', '/dev/null'];
    const script = `${writes.map((p) => `(echo w > '${p}') 2>/dev/null && echo "ok ${p}" || echo "refused ${p}"`).join('; ')}; ls /dev/pts >/dev/null && echo pts; cat /proc/self/mountinfo > '${join(s.ws, 'mountinfo')}'`;
    const seen: Record<'on' | 'off', { stdout: string; view: Map<string, string> }> = {} as never;
    for (const mode of ['on', 'off'] as const) {
      const sb = s.sandbox({ stepReadOnly: mode });
      try {
        const request = req(s, ['sh', '-c', script], { policy });
        const plan = await sb.plan(request);
        const at = plan.argv.findIndex((a) => a.endsWith('/bwrap'));
        const bwrapArgs = plan.argv.slice(at).join('\0');
        // the step says it (`+ro` after the range), bwrap binds / writable, and the workspace's bind over itself is gone
        expect(plan.argv.slice(0, at).includes('+ro')).toBe(mode === 'on');
        expect(bwrapArgs.includes('\0--bind\0/\0/\0')).toBe(mode === 'on');
        expect(bwrapArgs.includes(`\0--bind\0${s.ws}\0${s.ws}\0`)).toBe(mode === 'off');
        const r = await sb.run(request);
        expect(r.stderr).toBe('');
        expect(r.exitCode).toBe(0);
        seen[mode] = { stdout: r.stdout, view: visible(readFileSync(join(s.ws, 'mountinfo'), 'utf8')) };
      } finally {
        await sb.close();
      }
    }
    const expected = writes.map((p) => `${[s.ws, s.sessionTmp, cache, '/tmp', '/dev/null'].some((w) => p.startsWith(w)) ? 'ok' : 'refused'} ${p}`);
    expect(seen.on.stdout).toBe(`${expected.join('\n')}\npts\n`);
    expect(seen.off.stdout).toBe(seen.on.stdout);
    expect(readFileSync(join(s.home, 'kept.txt'), 'utf8')).toBe('host\n');
    expect(readFileSync(join(cache, 'in-cache.txt'), 'utf8')).toBe('w\n');
    // the same mounts with the same flags: every mount point both runs saw; one that only one run saw
    // is the host changing between them (another program's socket or data directory, hidden or
    // bound in), and it is read-only
    const { on, off } = { on: seen.on.view, off: seen.off.view };
    const both = [...on.keys()].filter((p) => off.has(p));
    expect(both.length).toBeGreaterThan(20);
    expect(both.map((p) => [p, on.get(p)])).toEqual(both.map((p) => [p, off.get(p)]));
    for (const [p, f] of [...on, ...off]) if (!both.includes(p)) expect([p, f.split(',')[0]]).toEqual([p, 'ro']);
    // and what that view is, either way: read-only but for the writable roots, /tmp and the kernel's own (the daemon's temp, hidden, read-only too)
    for (const view of [on, off]) {
      const writable = [...view].filter(([, f]) => f.split(',').includes('rw')).map(([p]) => p);
      expect(writable.filter((p) => ![s.ws, s.sessionTmp, cache, '/tmp', '/proc', '/dev'].some((w) => p === w || p.startsWith(`${w}/`)))).toEqual([]);
    }
  });
});

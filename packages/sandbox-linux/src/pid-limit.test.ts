import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { choosePidLimit, findPidsCgroup, idleRunCgroups, PidLimitError } from './pid-limit.js';
import { BUILD_LIKE, FORK_LOOP } from './pid-limit.probe.testing.js';
import { makeScene, req, type Scene, until } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { asNobody, canRunAsNobody, NOBODY } from './nobody.testing.js';

const isRoot = process.getuid?.() === 0;
const child = join(import.meta.dirname, 'pid-limit.child.testing.ts');
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => s?.cleanup());

describe('pid limit', { timeout: 90_000 }, () => {
  it.each([
    ['cgroup v1 pids', '40 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids', '8:pids:/svc\n0::/', '/sys/fs/cgroup/pids/svc/aalis'],
    ['cgroup v2', '40 31 0:36 / /nonexistent/cg rw - cgroup2 cgroup2 rw', '0::/svc', undefined], // no pids in its cgroup.controllers
    ['none', '40 31 0:36 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu', '0::/', undefined],
  ])('finds the pids hierarchy: %s', (_, mountinfo, own, base) => {
    expect(findPidsCgroup(mountinfo, own)).toBe(base);
  });

  it('uses RLIMIT_NPROC for an ordinary user and nothing when asked for 0', () => {
    expect(choosePidLimit(64, 1000).kind).toBe('rlimit');
    expect(choosePidLimit(0, 0).kind).toBe('none');
  });

  it.skipIf(!isRoot || findPidsCgroup() !== undefined)('fails closed as root without a pids cgroup', () => {
    expect(() => choosePidLimit(64, 0)).toThrow(PidLimitError);
  });

  const withCgroup = isRoot && findPidsCgroup() !== undefined;
  const mine = () => readdirSync(findPidsCgroup()!).filter((d) => d.startsWith(`aalis-sbx-${process.pid}-`));
  const count = (d: string) => readFileSync(join(findPidsCgroup()!, d, 'pids.current'), 'utf8').trim();
  // every run cgroup of this process back in the pool and empty (the last task of a run can stay counted for a second or two)
  const drained = async () => {
    const idle = () => idleRunCgroups(findPidsCgroup()!).map((d) => d.slice(d.lastIndexOf('/') + 1));
    for (let i = 0; i < 300 && !mine().every((d) => idle().includes(d) && count(d) === '0'); i++) await new Promise((r) => setTimeout(r, 20));
  };
  const forkLoop = async (sb: ReturnType<typeof createLinuxSandbox>) => {
    const r = await sb.run(req(s, ['python3', '-c', FORK_LOOP, '300']));
    expect(r.exitCode, r.stderr).toBe(0);
    const [, n, err] = r.stdout.trim().split(' ');
    expect(err).toBe('EAGAIN');
    expect(Number(n)).toBeGreaterThan(50); // the sandbox's own bwrap and python count too
    expect(Number(n)).toBeLessThan(64);
  };

  it.skipIf(!withCgroup)('as root: a fork loop stops at the limit with EAGAIN, the host still forks, the run cgroup is left empty', async () => {
    const sb = createLinuxSandbox({ pidLimit: 64 });
    await forkLoop(sb);
    expect(execFileSync('sh', ['-c', 'for i in 1 2 3 4 5 6 7 8; do true & done; wait; echo ok']).toString()).toBe('ok\n');
    await drained();
    for (const d of mine()) expect(count(d)).toBe('0');
  });

  it.skipIf(!withCgroup)('as root: run cgroups are reused, and a reused one gets its limit again (raised on the host meanwhile)', async () => {
    const sb = createLinuxSandbox({ pidLimit: 64 });
    await forkLoop(sb);
    await drained();
    const before = mine();
    for (const d of before) writeFileSync(join(findPidsCgroup()!, d, 'pids.max'), 'max'); // the change the next run must see
    await forkLoop(sb);
    expect(mine().length).toBeLessThanOrEqual(before.length); // reused, none made
    await drained();
  });

  it.skipIf(!withCgroup)('as root: an idle run cgroup with a task in it is not reused: the run gets its own, and only its tasks count', async () => {
    const sb = createLinuxSandbox({ pidLimit: 64 });
    await forkLoop(sb);
    await drained();
    const idle = idleRunCgroups(findPidsCgroup()!);
    expect(idle.length).toBeGreaterThan(0);
    const squatters: ChildProcess[] = [];
    try {
      for (const dir of idle) {
        for (let i = 0; i < 30; i++) {
          const p = spawn('sleep', ['60'], { stdio: 'ignore' });
          squatters.push(p);
          writeFileSync(join(dir, 'cgroup.procs'), String(p.pid));
        }
      }
      await forkLoop(sb); // would stop near 34 in a cgroup holding 30 sleepers
      expect(idle.every((d) => mine().includes(d.slice(d.lastIndexOf('/') + 1)))).toBe(true);
    } finally {
      for (const p of squatters) p.kill('SIGKILL');
    }
  });

  it.skipIf(!withCgroup)('as root: a run cgroup goes back to the pool when its run ends, and a task left in it holds it until that task dies', async () => {
    const sb = createLinuxSandbox({ pidLimit: 64 });
    await drained();
    const before = new Set(mine());
    await forkLoop(sb);
    // back at once, whatever it still counts: nothing polls it until the next run looks (one read)
    const [used] = mine().filter((d) => !before.has(d) || count(d) !== '0');
    const pool = () => idleRunCgroups(findPidsCgroup()!).map((d) => d.slice(d.lastIndexOf('/') + 1));
    expect(used === undefined || pool().includes(used)).toBe(true);
    expect(mine().every((d) => pool().includes(d))).toBe(true);
    // a task of the run that outlived it (a host process put in the cgroup stands in for one): 30 of them
    await drained();
    const held = mine();
    const survivors: ChildProcess[] = [];
    try {
      for (const d of held) {
        for (let i = 0; i < 30; i++) {
          const p = spawn('sleep', ['60'], { stdio: 'ignore' });
          survivors.push(p);
          writeFileSync(join(findPidsCgroup()!, d, 'cgroup.procs'), String(p.pid));
        }
      }
      await forkLoop(sb); // would stop near 34 in a cgroup its 30 survivors still count in
      await forkLoop(sb);
    } finally {
      for (const p of survivors) p.kill('SIGKILL');
    }
    // once they have died, the held cgroups are taken again: no new one is made
    await drained();
    const after = mine();
    for (let i = 0; i < held.length + 1; i++) await forkLoop(sb);
    expect(mine().length).toBe(after.length);
    await drained();
  });

  it('runs a build-like load (40 processes of 8 threads at once) under the default limit', async () => {
    const r = await createLinuxSandbox().run(req(s, ['python3', '-c', BUILD_LIKE]));
    expect(r.stdout, r.stderr).toBe('built 40\n');
  });

  const canSwitch = canRunAsNobody(child);
  it.skipIf(!canSwitch)('as nobody: the limit counts only the sandbox, not the 80 processes nobody already has on the host', async () => {
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, s.root]);
    const sleepers: ChildProcess[] = [];
    try {
      for (let i = 0; i < 80; i++) {
        const [cmd, ...args] = asNobody('sleep', '60');
        sleepers.push(spawn(cmd!, args, { stdio: 'ignore' }));
      }
      // each is nobody's sleep (setpriv has switched and exec'd), so the 80 count when the child forks
      const isNobodysSleep = (pid: number | undefined) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\u000060\u0000' && new RegExp(`^Uid:\\s+${NOBODY}\\s`, 'm').test(readFileSync(`/proc/${pid}/status`, 'utf8'));
        } catch {
          return false;
        }
      };
      await until(() => sleepers.every((p) => isNobodysSleep(p.pid)), "nobody's 80 sleeps run");
      const [cmd, ...args] = asNobody(process.execPath, '--import', 'tsx', child, JSON.stringify(s), '300', '64');
      const r = await execa(cmd!, args, { cwd: join(import.meta.dirname, '..'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' }, extendEnv: false, reject: false, timeout: 60_000 });
      expect(r.stderr).toBe('');
      const [, n, err] = r.stdout.trim().split(' ');
      expect(err, r.stdout).toBe('EAGAIN');
      expect(Number(n)).toBeGreaterThan(50);
      expect(Number(n)).toBeLessThan(64);
      expect(sleepers.every((p) => p.exitCode === null)).toBe(true); // the host's own processes of that user are untouched
    } finally {
      for (const p of sleepers) p.kill('SIGKILL');
    }
  });
});

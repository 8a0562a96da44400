import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { killPinned, pinPid } from './pinned-pid.js';
import { until } from './scene.testing.js';

// A sandbox's pid 1 killed by pid (launch-state.ts `killed`, a held or released run) must be the
// process read at the start, not whatever holds that pid later. Real processes: a pid namespace's
// pid 1 made by unshare, and (as root) another one given the same pid once the first is gone,
// through the kernel's ns_last_pid. A bare kill by pid killed the second one.
const isRoot = process.getuid?.() === 0;
const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) c.kill('SIGKILL');
});

/** A pid namespace's pid 1 (`sleep`), under unshare; with `at`, the kernel is asked to give it that pid. */
async function pid1(at?: number): Promise<number> {
  const unshare = 'exec unshare --pid --fork --kill-child sleep 600';
  const c = spawn('sh', ['-c', at === undefined ? unshare : `echo ${at - 1} > /proc/sys/kernel/ns_last_pid; ${unshare}`], { stdio: 'ignore' });
  started.push(c);
  let child: number | undefined;
  await until(() => {
    try {
      child = Number(readFileSync(`/proc/${c.pid}/task/${c.pid}/children`, 'utf8').trim().split(' ')[0]) || undefined;
    } catch {
      child = undefined;
    }
    return child !== undefined && readFileSync(`/proc/${child}/cmdline`, 'utf8').startsWith('sleep');
  }, 'the namespace pid 1 started');
  return child!;
}

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

describe.skipIf(!isRoot)('a pinned pid', { timeout: 60_000 }, () => {
  it('kills the process pinned while it lives', async () => {
    const pid = await pid1();
    expect(killPinned(pinPid(pid))).toBe(true);
    await until(() => !alive(pid), 'the pinned process died');
  });

  it('never kills another process given the same pid later, even another pid namespace pid 1', async () => {
    let reused: number | undefined;
    let pinned: ReturnType<typeof pinPid>;
    // other processes on the machine may take the pid first: tried again until the kernel gives it
    for (let i = 0; i < 30 && reused === undefined; i++) {
      const first = await pid1();
      pinned = pinPid(first);
      for (const c of started.splice(0)) c.kill('SIGKILL');
      await until(() => !existsSync(`/proc/${first}`), 'the first one is gone');
      const second = await pid1(first);
      if (second === first) reused = second;
      else for (const c of started.splice(0)) c.kill('SIGKILL');
    }
    expect(reused).toBeDefined();
    expect(killPinned(pinned!)).toBe(false);
    expect(alive(reused!)).toBe(true);
  });

  it('sends nothing for a pid that was never pinned', () => {
    expect(killPinned(undefined)).toBe(false);
  });
});

// A sandbox whose end the service cannot see must not hang its close() (and so a daemon's stop).
// Once, in a full bench, a prepared sandbox's pid 1 outlived its bwrap, reparented to init, and
// kept the run folder's FIFOs open: close() waited for their end for ever. Here the same shape is
// made with real processes: a bwrap run without `--die-with-parent`, so the sandbox's pid 1 (which
// sets its parent-death signal only with that flag) survives the kill of the bwrap outside it.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endWithin, forcedEndLine, killRemains } from './bounded-end.js';
import { findPidsCgroup, removeCgroup } from './pid-limit.js';
import { type OverlayScene, overlayScene, req, until } from './scene.testing.js';
import { findPython } from './system-interpreters.js';
import { findExecutable } from './tools.js';

const isRoot = process.getuid?.() === 0;

/** Pids of processes (this one aside) holding an fd into a folder under `dir`: a run folder's FIFOs. */
function holdersUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    try {
      if (readdirSync(`/proc/${n}/fd`).some((fd) => readlinkSync(`/proc/${n}/fd/${fd}`).startsWith(`${dir}/`))) pids.push(Number(n));
    } catch {
      // gone meanwhile, or not readable
    }
  }
  return pids;
}

/** Whether `pid` runs (a zombie has ended). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe("the bound on a wait for a sandbox's end", () => {
  const never = new Promise<void>(() => {});
  it('an end within the bound needs nothing: no kill, our ends left open', async () => {
    let asked = 0;
    const forced = await endWithin(Promise.resolve(), () => {
      asked++;
      return { runDir: '/nonexistent/run' };
    }, () => asked++, { graceMs: 50, afterMs: 50 });
    expect(forced).toBeUndefined();
    expect(asked).toBe(0);
  });

  it('an end that never comes: our ends are closed and the wait given up, and it says so', async () => {
    let closed = 0;
    const forced = await endWithin(never, () => ({ runDir: '/nonexistent/run' }), () => closed++, { graceMs: 20, afterMs: 20 });
    expect(closed).toBe(1);
    expect(forced).toEqual({ remains: { runDir: '/nonexistent/run' }, killed: [], closedOurs: true, abandoned: true });
    expect(forcedEndLine('a prepared sandbox', forced!)).toMatch(/killed 0 of its processes through nothing it owns.*closed on our side.*given up/);
    // a pid that failed its check is not said to be verified
    expect(forcedEndLine('a killed run', { ...forced!, remains: { runDir: '/nonexistent/run', pid: 4242 } })).toMatch(/through its pid 1 \(4242 was gone or no longer it: left alone\)/);
    expect(forcedEndLine('a killed run', { ...forced!, remains: { runDir: '/nonexistent/run', pid: 4242 }, killed: [4242] })).toMatch(/killed 1 of its processes through its pid 1 \(verified\)/);
  });

  it('an end that comes once our ends are closed is not given up', async () => {
    let end!: () => void;
    const ended = new Promise<void>((r) => {
      end = r;
    });
    const forced = await endWithin(ended, () => ({ runDir: '/nonexistent/run' }), () => end(), { graceMs: 20, afterMs: 1000 });
    expect(forced).toMatchObject({ closedOurs: true, abandoned: false });
  });
});

describe.skipIf(!isRoot)('a sandbox that outlives its bwrap (a root daemon, through the launcher)', { timeout: 120_000 }, () => {
  let s: OverlayScene;
  let lingering: string;
  beforeAll(async () => {
    s = await overlayScene();
    // the real bwrap, without --die-with-parent: the sandbox's pid 1 then has no parent-death signal
    lingering = join(s.root, 'bwrap-lingers');
    writeFileSync(lingering, `#!/bin/sh\nfor a; do shift; [ "$a" = --die-with-parent ] || set -- "$@" "$a"; done\nexec ${findExecutable('bwrap')} "$@"\n`);
    chmodSync(lingering, 0o755);
  });
  afterAll(() => s?.cleanup());

  it('a run whose output a process outside its pid namespace holds open ends at its timeout: that process is killed through the pids cgroup', { timeout: 60_000 }, async () => {
    // a bwrap that leaves a process behind holding the run's FIFOs (its stdout is fifo/out), reparented
    // to init, once bwrap is in the run's pids cgroup (as every process of a sandbox is)
    const leaving = join(s.root, 'bwrap-leaves');
    writeFileSync(
      leaving,
      `#!/bin/sh\ncase "$(readlink /proc/$$/fd/1)" in */fifo/out) i=0; until grep -q 'pids:/.' /proc/$$/cgroup || [ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; (exec sleep 611.75 </dev/null &) ;; esac\nexec ${findExecutable('bwrap')} "$@"\n`,
    );
    chmodSync(leaving, 0o755);
    const warnings: string[] = [];
    const sb = s.sandbox({ bwrap: leaving, onWarning: (line: string) => warnings.push(line) });
    try {
      const r = await sb.run(req(s, ['sh', '-c', 'echo ran'], { timeoutMs: 8000 })); // room for its set-up under load (1.5 s timed out before 'echo' in CI)
      // the command ran and exited; its output's end never came, so the run timed out, and then ended
      expect(r.stdout).toBe('ran\n');
      expect(r.timedOut).toBe(true);
      expect(warnings.join('\n')).toMatch(/a killed run \(.*\) did not end within \d+ ms of its kill; killed 1 of its processes/);
      expect(holdersUnder(s.tmpDir)).toEqual([]);
    } finally {
      await sb.close();
      for (const pid of holdersUnder(s.tmpDir)) process.kill(pid, 'SIGKILL');
    }
  });

  it('close() ends a prepared sandbox whose pid 1 survived its bwrap: killed through its pid cgroup, said in a warning', { timeout: 60_000 }, async () => {
    const warnings: string[] = [];
    const sb = s.sandbox({ bwrap: lingering, prepare: 'on', onWarning: (line: string) => warnings.push(line) });
    let closed = false;
    try {
      const r = await sb.run(req(s, ['sh', '-c', 'echo ran']));
      expect(r.stdout, r.stderr).toBe('ran\n');
      await sb.preparationsSettled();
      expect(sb.preparedCounts().prepared).toBeGreaterThan(0);
      const held = holdersUnder(s.tmpDir);
      expect(held.length).toBeGreaterThan(0); // the prepared sandbox's bwrap, its pid 1 and its shim
      await sb.close();
      closed = true;
      expect(held.filter(running)).toEqual([]);
      expect(holdersUnder(s.tmpDir)).toEqual([]);
      expect(warnings.join('\n')).toMatch(/did not end within \d+ ms of its kill; killed \d+ of its processes through its pid 1 \(verified\) and its pids cgroup/);
    } finally {
      if (!closed) for (const pid of holdersUnder(s.tmpDir)) process.kill(pid, 'SIGKILL'); // a failed test leaves nothing behind
    }
  });
});

describe.skipIf(!isRoot)('what remains of a sandbox is killed only through what the run owns', { timeout: 60_000 }, () => {
  let root: string;
  const started: ChildProcess[] = [];
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'aalis-remains-'));
  });
  afterAll(() => {
    for (const c of started) c.kill('SIGKILL');
    for (const pid of holdersUnder(root)) process.kill(pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  /** A process (and its pid) holding `file` open on fd 3; `pidns`: as pid 1 of a new pid namespace (its host pid is returned). */
  async function holder(file: string, pidns: boolean): Promise<number> {
    writeFileSync(file, '');
    // sh becomes sleep (exec), so the holder is the process started (or unshare's child, killed with unshare)
    const script = 'exec 3<"$0"; exec sleep 600';
    const c = pidns ? spawn('unshare', ['--pid', '--fork', '--kill-child', 'sh', '-c', script, file], { stdio: 'ignore' }) : spawn('sh', ['-c', script, file], { stdio: 'ignore' });
    started.push(c);
    const parent = c.pid!;
    let pid: number | undefined;
    await until(() => {
      // the one holding the file: sh itself, or (in a new pid namespace) unshare's child
      const candidates = pidns ? readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [parent];
      pid = candidates.find((p) => holdersUnder(root).includes(p));
      return pid !== undefined;
    }, 'the holder');
    return pid!;
  }

  it("the sandbox's pid is killed only while it is pid 1 of a pid namespace and holds an fd in the run's folder", async () => {
    const run = join(root, 'run-a');
    const other = join(root, 'run-b');
    mkdirSync(run);
    mkdirSync(other);
    const notPid1 = await holder(join(run, 'out'), false);
    const otherRun = await holder(join(other, 'out'), true);
    const pid1 = await holder(join(run, 'err'), true);
    for (const python of [findPython(), undefined]) {
      expect(await killRemains({ runDir: run, pid: notPid1 }, python)).toEqual([]);
      expect(await killRemains({ runDir: run, pid: otherRun }, python)).toEqual([]);
    }
    expect(running(notPid1) && running(otherRun)).toBe(true);
    expect(await killRemains({ runDir: run, pid: pid1 }, findPython())).toEqual([pid1]);
    await until(() => !running(pid1), 'pid 1 gone');
  });

  it("a pid 1 of another mount namespace holding a file its own namespace names like the run's folder is not the run's: left running", async () => {
    // a sandbox or container of anything else (a docker sandbox's command is its pid 1) can make a
    // file at any path in its own file system; read from here, the link of its fd names that path
    const run = join(root, 'run-d');
    mkdirSync(run);
    const script = `mount -t tmpfs forged "$0" && mkdir "$0/run-d" && exec 3>"$0/run-d/out" && exec sleep 600`;
    const c = spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount', '--propagation', 'private', 'sh', '-c', script, root], { stdio: 'ignore' });
    started.push(c);
    let forger: number | undefined;
    await until(() => {
      const kids = readFileSync(`/proc/${c.pid}/task/${c.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      forger = kids.find((p) => holdersUnder(run).includes(p) && readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'sleep');
      return forger !== undefined;
    }, 'the forger');
    for (const python of [findPython(), undefined]) expect(await killRemains({ runDir: run, pid: forger! }, python)).toEqual([]);
    expect(running(forger!)).toBe(true);
  });

  it("every process in the run's pids cgroup is killed, and nothing outside it", async () => {
    const base = findPidsCgroup();
    expect(base).toBeDefined();
    mkdirSync(base!, { recursive: true });
    const cgroup = join(base!, `aalis-remains-test-${process.pid}`);
    mkdirSync(cgroup);
    try {
      const run = join(root, 'run-c');
      mkdirSync(run);
      const inside = [await holder(join(run, 'x'), false), await holder(join(run, 'y'), false)];
      const outside = await holder(join(run, 'z'), false);
      for (const pid of inside) writeFileSync(join(cgroup, 'cgroup.procs'), String(pid));
      expect((await killRemains({ runDir: run, cgroup }, findPython())).sort()).toEqual(inside.sort());
      await until(() => inside.every((p) => !running(p)), 'the cgroup emptied');
      expect(running(outside)).toBe(true);
    } finally {
      await removeCgroup(cgroup);
    }
  });
});

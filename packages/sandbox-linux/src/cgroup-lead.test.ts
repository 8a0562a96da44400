import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CgroupLead } from './cgroup-lead.js';
import { findPidsCgroup, sweepStalePidCgroups } from './pid-limit.js';
import { makeScene, req, until } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const base = process.getuid?.() === 0 ? findPidsCgroup() : undefined;
const procs = (dir: string) => readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
};
const ownPidsCgroup = () => readFileSync('/proc/self/cgroup', 'utf8');
/** The lead cgroups of this process's services. */
const ownLeads = () => readdirSync(base!).filter((n) => n.startsWith(`aalis-lead-${process.pid}-`)).map((n) => join(base!, n));

describe.skipIf(base === undefined)('the cgroup lead (as root, a pids cgroup)', { timeout: 60_000 }, () => {
  it('parks one shell in a cgroup of its own, limited to one task, and moves nothing but that shell', async () => {
    const before = ownPidsCgroup();
    const lead = CgroupLead.open(base!);
    if (!(lead instanceof CgroupLead)) throw new Error(`no lead: ${lead.off}`);
    try {
      await until(() => procs(lead.dir).length === 1, 'the shell moved itself in');
      const [pid] = procs(lead.dir);
      expect(cmdline(pid!)).toContain('aalis-cgroup-lead');
      expect(readFileSync(join(lead.dir, 'pids.max'), 'utf8').trim()).toBe('1');
      for (let i = 0; i < 50; i++) lead.kick();
      // every kick read and done: the shell is still the one task there, and it is still running
      await until(() => readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'S', 'the shell waits again');
      expect(procs(lead.dir)).toEqual([pid]);
      expect(lead.running).toBe(true);
      expect(ownPidsCgroup()).toBe(before); // this process was not moved
    } finally {
      await lead.close();
    }
    expect(existsSync(lead.dir)).toBe(false);
    expect(lead.running).toBe(false);
  });

  it('a lead that was ended stops, and runs go on without it', async () => {
    const s = makeScene();
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      expect((await sb.run(req(s, ['true']))).exitCode).toBe(0);
      expect(ownLeads()).toHaveLength(1);
      const [dir] = ownLeads() as [string];
      await until(() => procs(dir).length === 1, 'the service parked its lead');
      const [pid] = procs(dir);
      process.kill(pid!, 'SIGKILL'); // as if the host ended it
      await until(() => procs(dir).length === 0, 'the lead is gone');
      for (let i = 0; i < 3; i++) expect((await sb.run(req(s, ['sh', '-c', 'echo ran']))).stdout).toBe('ran\n');
    } finally {
      await sb.close();
      s.cleanup();
    }
    expect(ownLeads()).toEqual([]);
  });

  it('two services in one process park a lead each, in a cgroup each: closing one leaves the other running and removes its own', async () => {
    // before, both shells went into the one aalis-lead-<pid> (pids.max 1, two tasks), and the first
    // close found it busy with the other's shell, waited its removal out and left it behind
    const s = makeScene();
    const a = createLinuxSandbox({ hostModel: 'overlay' });
    const b = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      expect((await a.run(req(s, ['true']))).exitCode).toBe(0);
      expect((await b.run(req(s, ['true']))).exitCode).toBe(0);
      await until(() => ownLeads().flatMap(procs).length === 2, 'both shells moved in');
      expect(ownLeads().map((d) => procs(d).length)).toEqual([1, 1]);
      await a.close();
      expect(ownLeads()).toHaveLength(1);
      const [left] = ownLeads() as [string];
      expect(procs(left)).toHaveLength(1);
      expect(cmdline(procs(left)[0]!)).toContain('aalis-cgroup-lead');
      expect((await b.run(req(s, ['true']))).exitCode).toBe(0);
    } finally {
      await a.close();
      await b.close();
      s.cleanup();
    }
    expect(ownLeads()).toEqual([]);
  });

  it('never takes a cgroup of its name that is already there: one a gone daemon of the same pid left, with a task in it', async () => {
    // before, the lead's mkdir took an existing one as its own and set pids.max 1 on whatever ran in it
    const first = CgroupLead.open(base!);
    if (!(first instanceof CgroupLead)) throw new Error(`no lead: ${first.off}`);
    await first.close();
    const n = Number(/-(\d+)$/.exec(first.dir)![1]);
    const taken = join(base!, `aalis-lead-${process.pid}-${n + 1}`);
    mkdirSync(taken);
    const other = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      writeFileSync(join(taken, 'cgroup.procs'), String(other.pid));
      const lead = CgroupLead.open(base!);
      if (!(lead instanceof CgroupLead)) throw new Error(`no lead: ${lead.off}`);
      try {
        expect(lead.dir).not.toBe(taken);
        expect(readFileSync(join(taken, 'pids.max'), 'utf8').trim()).toBe('max');
        await until(() => procs(lead.dir).length === 1, 'the shell moved itself in');
        expect(procs(taken)).toEqual([other.pid]);
      } finally {
        await lead.close();
      }
    } finally {
      other.kill('SIGKILL');
      await new Promise((resolve) => other.once('exit', resolve));
      await until(() => procs(taken).length === 0, 'the sleep is gone');
      rmdirSync(taken);
    }
  });

  it('a lead stopped by the host does not hold the close: the shell is ended and its cgroup removed', async () => {
    // before, close() ended the shell's stdin and waited for it to exit, which a stopped shell never does
    const lead = CgroupLead.open(base!);
    if (!(lead instanceof CgroupLead)) throw new Error(`no lead: ${lead.off}`);
    await until(() => procs(lead.dir).length === 1, 'the shell moved itself in');
    const [pid] = procs(lead.dir);
    process.kill(pid!, 'SIGSTOP');
    await until(() => readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] === 'T', 'the shell is stopped');
    lead.kick();
    await lead.close();
    expect(existsSync(lead.dir)).toBe(false);
    expect(existsSync(`/proc/${pid}`) && readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z').toBe(false);
  });

  it('the sweep removes the lead cgroups of a daemon that is gone, in either name', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    const dirs = [join(base!, `aalis-lead-${gone.pid}`), join(base!, `aalis-lead-${gone.pid}-3`)];
    for (const d of dirs) mkdirSync(d);
    sweepStalePidCgroups({ kind: 'cgroup', base: base! });
    expect(dirs.filter((d) => existsSync(d))).toEqual([]);
  });

  it('a killed daemon leaves its lead to end with it, and the next start sweeps its cgroup', async () => {
    // a process that opens a lead, says where, and is killed: the shell reads the end of its stdin
    const script = `import { CgroupLead } from ${JSON.stringify(join(import.meta.dirname, 'cgroup-lead.ts'))}; const l = CgroupLead.open(${JSON.stringify(base)}); console.log(l.dir); setInterval(() => {}, 1000);`;
    const daemon = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let dir = '';
    daemon.stdout!.on('data', (b: Buffer) => (dir += b.toString()));
    await until(() => dir.endsWith('\n'), 'the daemon opened its lead');
    dir = dir.trim();
    expect(dir.startsWith(join(base!, `aalis-lead-${daemon.pid}-`))).toBe(true);
    await until(() => procs(dir).length === 1, 'its shell moved in');
    const [shell] = procs(dir);
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    daemon.kill('SIGKILL');
    await exited; // reaped: the sweep leaves the cgroups of a pid that still exists (a zombie too) alone
    await until(() => !existsSync(`/proc/${shell}`) || readFileSync(`/proc/${shell}/stat`, 'utf8').split(' ')[2] === 'Z', 'the shell ended with the daemon');
    await until(() => procs(dir).length === 0, 'its cgroup is empty');
    // as the next starts would: a shell not yet reaped by init still counts in the cgroup (rmdir: EBUSY) for a moment
    await until(() => {
      sweepStalePidCgroups({ kind: 'cgroup', base: base! });
      return !existsSync(dir);
    }, 'the sweep removed its cgroup');
  });
});

describe('the cgroup lead (off)', () => {
  it('is not started when cgroupLead is off, and a run is limited all the same', { timeout: 60_000, skip: base === undefined }, async () => {
    const s = makeScene();
    const sb = createLinuxSandbox({ hostModel: 'overlay', cgroupLead: 'off', pidLimit: 20 });
    try {
      // a fork loop stops short of the limit (the sandbox's /proc/self/cgroup names its cgroup or,
      // where bwrap made its cgroup namespace after the move, "/": it cannot tell the limit)
      const loop = "sh -c 'i=0; while [ $i -lt 60 ]; do echo $i > n; sleep 5 & i=$((i+1)); done' 2>/dev/null; read x < n; echo forked=$x";
      const r = await sb.run(req(s, ['sh', '-c', loop]));
      const forked = Number(/forked=(\d+)/.exec(r.stdout)?.[1]);
      expect(forked).toBeGreaterThan(0);
      expect(forked).toBeLessThan(20);
      expect(readdirSync(base!).filter((n) => n.startsWith(`aalis-lead-${process.pid}`))).toEqual([]);
    } finally {
      await sb.close();
      s.cleanup();
    }
  });
});

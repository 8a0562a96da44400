import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { pathIsUnder, type SandboxCheck } from '@aalis/api-reach';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeCgroup } from './pid-limit.js';

/**
 * The CPU weight of all of one daemon's sandboxes together (v1 `cpu.shares`), that of one session:
 * a nice-0 task and an autogroup both weigh 1024. With `kernel.sched_autogroup_enabled` every
 * `bwrap --new-session` is its own autogroup, weighted like the daemon's whole one, so eight
 * concurrent sandboxes weighed eight times the daemon and held its thread off the CPU for seconds
 * over a bench window (issue 17). In one cgroup they weigh as much as the daemon together, and as
 * much as one other session of the machine's. Measured (README, "CPU share"): 1024 lowered the
 * worst stall and kept the throughput; 128 lowered the thread's wait too but cost ~20% of the
 * throughput while other sessions loaded the machine (the group lost to each of them) and did not
 * lower the worst stall reliably.
 */
export const SANDBOX_CPU_SHARES = 1024;

/** The {@link LinuxSandboxOptions.cpuShare} settings. */
export const CPU_SHARE_SETTINGS = ['on', 'off'] as const;
/** One of {@link CPU_SHARE_SETTINGS}. */
export type CpuShareSetting = (typeof CPU_SHARE_SETTINGS)[number];

/** Where the sandboxes' CPU cgroup is, or why there is none (runs then go at normal priority). */
export type CpuShareWhere = { readonly kind: 'cgroup'; readonly dir: string } | { readonly kind: 'none'; readonly reason: string };

/** The prefix of a daemon's CPU cgroups, followed by its pid and the service's number (swept once that pid is gone). */
const PREFIX = 'aalis-cpu-';

/** Shares opened by this process so far: each service has a cgroup of its own, as each has its own launcher in it. */
let opened = 0;

/**
 * Where this process's CPU cgroups go: `aalis-cpu-<pid>` (each service's is that name and `-<n>`,
 * {@link openCpuShare}) under its own cgroup of the v1 `cpu` hierarchy (a child group competes
 * with the daemon's tasks at its weight, and a task outside the root cpu cgroup is never
 * autogrouped). cgroup v2 is not handled: there a sandbox is in one cgroup only, its run's pids
 * cgroup, which would need the weight instead; nor a cpu hierarchy that carries pids too.
 */
export function findCpuCgroup(mountinfo = safeRead('/proc/self/mountinfo'), own = safeRead('/proc/self/cgroup'), pid = process.pid): CpuShareWhere {
  let v2 = false;
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const [fstype, , superOpts = ''] = after.split(' ');
    const [, , , root = '/', mountPoint] = before.split(' ');
    if (!mountPoint) continue;
    if (fstype === 'cgroup' && superOpts.split(',').includes('cpu')) {
      // a task is in one cgroup of a hierarchy: with pids mounted beside cpu, a move into the CPU
      // cgroup would take the sandbox out of its pids cgroup, and its pid limit with it
      if (superOpts.split(',').includes('pids')) return { kind: 'none', reason: 'the cpu controller is mounted together with pids, where each sandbox has a pids cgroup of its own' };
      const mine = own.split('\n').find((l) => l.split(':')[1]?.split(',').includes('cpu'));
      const path = mine?.split(':').slice(2).join(':') ?? '/';
      // the mount shows the hierarchy from `root` on (a container's own cgroup, mounted as its
      // /sys/fs/cgroup/cpu): the group is under the mount point at the path below that root; joined
      // whole, the recursive mkdir made that root's path again as new groups inside it, left behind
      const below = root !== '/' && pathIsUnder(path, root, 'linux') ? path.slice(root.length) || '/' : path;
      return { kind: 'cgroup', dir: join(mountPoint, below, `${PREFIX}${pid}`) };
    }
    if (fstype === 'cgroup2') v2 = true;
  }
  return { kind: 'none', reason: v2 ? 'only a cgroup v2 hierarchy is mounted, and the sandboxes\' CPU weight is made in the v1 cpu controller only' : 'no cgroup cpu controller is mounted' };
}

function safeRead(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}

/**
 * One daemon's CPU cgroup for its sandboxes, made by {@link openCpuShare}. Not a security promise:
 * where a step fails the run goes on at normal priority.
 */
export interface CpuShare {
  /** Where the cgroup is, or why there is none. */
  readonly where: CpuShareWhere;
  /** Starts moving bwrap (`pid`) in as soon as it is spawned, so the sandbox it forks is born inside. */
  adopt(pid: number): void;
  /** Moves the sandbox's first process in unless it was born inside, before the command runs; never rejects. */
  enter(pid: number): Promise<void>;
  /** Removes the cgroup once its last task has left (retried for a few seconds; the next start's sweep takes one still busy). */
  close(): Promise<void>;
}

const NONE = (reason: string): CpuShare => ({ where: { kind: 'none', reason }, adopt: () => {}, enter: async () => {}, close: async () => {} });

/**
 * Makes a CPU cgroup for one service's sandboxes and launcher (as root, with the v1 cpu
 * controller), `<base>-<n>`, with {@link SANDBOX_CPU_SHARES}, after removing the ones of daemons
 * that are gone. Elsewhere, or when any step fails, a {@link CpuShare} that does nothing and says why.
 */
export function openCpuShare(base = findCpuCgroup(), uid = process.geteuid?.() ?? 0): CpuShare {
  if (base.kind === 'none') return NONE(base.reason);
  if (uid !== 0) return NONE('the daemon is not root, so it cannot make a cgroup in the cpu controller');
  const parent = base.dir.slice(0, base.dir.lastIndexOf('/'));
  sweepStaleCpuCgroups(parent);
  // a cgroup per service: two in one process (the exec helper keeps a few) each remove their own
  // at close(), never one the other's launcher still sits in. Made here, not found: one of that
  // name already there (a gone daemon's of the same pid) is not shared.
  let dir = '';
  try {
    mkdirSync(parent, { recursive: true, mode: 0o755 });
    for (;;) {
      dir = `${base.dir}-${++opened}`;
      try {
        mkdirSync(dir, { mode: 0o755 });
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    writeFileSync(join(dir, 'cpu.shares'), String(SANDBOX_CPU_SHARES));
  } catch (e) {
    try {
      rmdirSync(dir);
    } catch {
      // not made, or not ours
    }
    return NONE(`the cpu cgroup ${dir || parent} cannot be used: ${(e as Error).message}`);
  }
  const where: CpuShareWhere = { kind: 'cgroup', dir };
  const procs = join(dir, 'cgroup.procs');
  return {
    where,
    adopt: (pid) => {
      // the move waits for an RCU grace period, here off the daemon's thread and during bwrap's start
      writeFile(procs, String(pid)).catch(() => {}); // enter() checks what it achieved
    },
    enter: async (pid) => {
      // the sandbox still waits at the start of its setup: moved now, everything it starts is inside
      try {
        if (inCpuCgroup(await readFile(`/proc/${pid}/cgroup`, 'utf8'), dir)) return; // born inside
        await writeFile(procs, String(pid));
      } catch {
        // gone already, or the cgroup was removed on the host: the run goes on at normal priority
      }
    },
    close: () => removeCgroup(dir),
  };
}

/** Whether a `/proc/<pid>/cgroup` text puts the task in `dir`'s cpu cgroup (the path ends with its name: a cgroup namespace shortens the rest). */
export function inCpuCgroup(procCgroup: string, dir: string): boolean {
  const name = dir.slice(dir.lastIndexOf('/') + 1);
  return procCgroup.split('\n').some((l) => l.split(':')[1]?.split(',').includes('cpu') && l.split(':').slice(2).join(':').endsWith(`/${name}`));
}

/** Removes the CPU cgroups under `base` of daemons whose process is gone (one still holding tasks stays). */
export function sweepStaleCpuCgroups(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const n of names) {
    // `aalis-cpu-<pid>-<n>`, and `aalis-cpu-<pid>` as versions before the per-service cgroups named them
    const pid = n.startsWith(PREFIX) ? /^(\d+)(?:-\d+)?$/.exec(n.slice(PREFIX.length))?.[1] : undefined;
    if (pid === undefined || Number(pid) === process.pid || existsSync(`/proc/${pid}`)) continue;
    try {
      rmdirSync(join(base, n));
    } catch {
      // still has tasks, or not ours to remove
    }
  }
}

/**
 * The `cpu-share` check of `aalis doctor`: whether a daemon's sandboxes yield the CPU to it
 * (`share`, once made) or would (`setting` on), or why they compete with it as equals. Advisory:
 * a run never fails for it.
 */
export function cpuShareCheck(setting: CpuShareSetting, share?: CpuShare, uid = process.geteuid?.() ?? 0): SandboxCheck {
  const name = 'cpu-share';
  if (setting === 'off') return { name, ok: true, detail: 'off (a one-shot run, or AALIS_CPU_SHARE=off): sandboxed commands compete for the CPU like any other process' };
  const where = share?.where ?? (uid === 0 ? findCpuCgroup() : { kind: 'none' as const, reason: 'the daemon is not root, so it cannot make a cgroup in the cpu controller' });
  // not made yet (`aalis doctor` is a process of its own): named as a daemon's would be
  const dir = where.kind === 'cgroup' && !share ? `${where.dir.slice(0, where.dir.lastIndexOf('/'))}/${PREFIX}<daemon pid>-<n>` : where.kind === 'cgroup' ? where.dir : '';
  if (where.kind === 'cgroup') return { name, ok: true, detail: `the daemon's sandboxes share one cpu cgroup (${dir}, cpu.shares ${SANDBOX_CPU_SHARES}: together they weigh as much as the daemon, not once each), so its event loop waits less for a CPU` };
  return {
    name,
    ok: false,
    detail: `${where.reason}: sandboxed commands run at normal priority, each in its own session (its own autogroup), so busy commands can delay the daemon's answers`,
    fix: 'nothing is unsafe; for a daemon that answers at once while commands are busy, run it as root where the cgroup v1 cpu controller is mounted',
  };
}

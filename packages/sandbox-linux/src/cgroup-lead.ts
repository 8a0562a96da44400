import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findSystemTool } from './loopback-filter.js';
import { removeCgroup } from './pid-limit.js';

/**
 * Starts, at a run's start, the wait that moving its sandbox into its cgroup will have.
 *
 * A move into a cgroup (a write to `cgroup.procs`) takes the kernel's one lock over every task's
 * cgroup (`cgroup_threadgroup_rwsem`), and taking it waits for an RCU grace period unless another
 * move took it less than a grace period before (measured here: 5–9 ms, then 0.07 ms for the move
 * right after). A cold run moved its sandbox into its pids cgroup (and the CPU share's) only once
 * bwrap had started, and waited that whole period before the command was released: about a third
 * of a run of `true`. The lead starts the period when the run starts, so it passes while the run
 * scans and sets up.
 *
 * How, without moving anything of anyone's: a shell of ours, parked in a cgroup of its own (one
 * task at most: it forks nothing, `read` and `echo` are built in), moves itself into the cgroup it
 * is already in (`echo 0 > cgroup.procs`: "0" is the writer itself) for each line the daemon
 * sends. No pid is written, so none can have been reused. The shell ends at the end of its
 * stdin, so with the daemon; its cgroup is named by the daemon's pid and the lead's number in it
 * (`aalis-lead-<pid>-<n>`: each service of a process has its own, one task in each), so the
 * next start's sweep removes one a killed daemon left (pid-limit.ts). Only speed depends on it: anything
 * that fails turns it off, and every run is limited exactly as before.
 */
export class CgroupLead {
  /** Leads opened by this process so far: each service's lead has a cgroup of its own. */
  private static opened = 0;
  private alive = true;
  private readonly ended: Promise<void>;

  private constructor(
    private readonly shell: ChildProcess,
    /** The lead's own cgroup (removed by {@link close}). */
    readonly dir: string,
  ) {
    this.ended = new Promise((resolve) => {
      const end = () => {
        this.alive = false;
        resolve();
      };
      shell.once('exit', end);
      shell.once('error', end); // never started
    });
    shell.stdin?.on('error', () => (this.alive = false));
  }

  /** A lead under the pids cgroup `base`, or why there is none (the runs go on as before). */
  static open(base: string): CgroupLead | { readonly off: string } {
    const sh = findSystemTool('sh');
    if (!sh) return { off: 'no sh on the system path' };
    let dir = '';
    try {
      mkdirSync(base, { recursive: true });
      // a cgroup of its own, made here: one of that name already there (a gone daemon's of the same
      // pid, whose stopped shell keeps it) is someone else's, never limited nor shared
      for (;;) {
        dir = join(base, `aalis-lead-${process.pid}-${++CgroupLead.opened}`);
        try {
          mkdirSync(dir);
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
      }
      writeFileSync(join(dir, 'pids.max'), '1');
    } catch (e) {
      return { off: `its cgroup ${dir || base} could not be made: ${(e as Error).message}` };
    }
    const script = 'echo 0 > "$1" || exit 1; while read -r _; do echo 0 > "$1" || exit 1; done';
    const shell = spawn(sh, ['-c', script, 'aalis-cgroup-lead', join(dir, 'cgroup.procs')], { stdio: ['pipe', 'ignore', 'ignore'], env: {}, cwd: '/' });
    const lead = new CgroupLead(shell, dir);
    // neither keeps a one-shot `aalis exec` alive: the shell ends with this process
    shell.unref();
    (shell.stdin as { unref?: () => void } | null)?.unref?.();
    return lead;
  }

  /** The shell's pid (undefined when it could not be spawned). */
  get pid(): number | undefined {
    return this.shell.pid;
  }

  /** Whether it still runs (a lead that ended is not started again: the runs go on without it). */
  get running(): boolean {
    return this.alive;
  }

  /** Starts the wait now; returns at once (the shell waits, not this process). */
  kick(): void {
    if (this.alive) this.shell.stdin?.write('\n');
  }

  /** Ends the shell and removes its cgroup once it has left it. */
  async close(): Promise<void> {
    this.alive = false;
    this.shell.ref(); // waited for here, though it does not keep a process alive otherwise
    this.shell.stdin?.end();
    // killed, not only told: a shell the host stopped (or one stuck) would never read the end
    if (this.shell.exitCode === null && this.shell.signalCode === null) this.shell.kill('SIGKILL');
    await this.ended;
    await removeCgroup(this.dir);
  }
}

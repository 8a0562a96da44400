// A daemon's stop must finish even when something outlives a sandbox's bwrap and holds the run
// folder's FIFOs. Once a full bench's daemon never stopped: the write ends of a prepared sandbox's
// FIFOs stayed open after its bwrap's kill, and the sandbox service's close() waited for their end
// for ever. Here a real `aalis serve` runs with a bwrap first on its PATH that, for a prepared
// sandbox only, leaves behind a process holding those FIFOs, reparented to init (so neither the
// daemon's kill of its commands' descendants nor its kill of its bwraps finds it).
import { accessSync, chmodSync, constants, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const isRoot = process.getuid?.() === 0;
/** What the bwrap below leaves behind, by a command line nothing else has. */
const LINGER = 'sleep 613.25';
const dir = deploymentDir({ owners: { chat: ['alice'] } });
const bin = mkdtempSync(join(tmpdir(), 'aalis-lingering-bwrap-'));
let daemon: ServeProcess | undefined;
afterAll(async () => {
  await daemon?.stop('SIGKILL');
  for (const pid of lingering()) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  rmSync(bin, { recursive: true, force: true });
});

/** Pids of processes (this one aside) holding an fd in one of `daemon`'s run folders. */
function holdersOf(daemonPid: number): number[] {
  const prefix = join(tmpdir(), `aalis-sbx-${daemonPid}-`);
  const pids: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid || Number(n) === daemonPid) continue;
    try {
      if (readdirSync(`/proc/${n}/fd`).some((fd) => readlinkSync(`/proc/${n}/fd/${fd}`).startsWith(prefix))) pids.push(Number(n));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The processes the bwrap below left behind. */
function lingering(): number[] {
  return readdirSync('/proc').filter((n) => {
    try {
      return /^\d+$/.test(n) && readFileSync(`/proc/${n}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() === LINGER;
    } catch {
      return false;
    }
  }).map(Number);
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!isRoot)("a daemon's stop with a sandbox that outlives its bwrap", () => {
  it('finishes, kills what remained and says so in its log', { timeout: 120_000 }, async () => {
    const real = (process.env.PATH ?? '').split(':').map((d) => join(d, 'bwrap')).find((p) => {
      try {
        accessSync(p, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
    expect(real).toBeDefined();
    // the run folder is where its stdout FIFO is (fifo/out); a prepared one's is marked `prepared`;
    // what it leaves is started once bwrap is in the run's pids cgroup, as a sandbox's processes are
    writeFileSync(
      join(bin, 'bwrap'),
      `#!/bin/sh\nout=$(readlink /proc/$$/fd/1)\ncase "$out" in */fifo/out) [ -e "\${out%/fifo/out}/prepared" ] && { i=0; until grep -q 'pids:/.' /proc/$$/cgroup || [ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done; (exec ${LINGER} </dev/null &); } ;; esac\nexec ${real} "$@"\n`,
    );
    chmodSync(join(bin, 'bwrap'), 0o755);
    daemon = await startServe(dir, [], { PATH: `${bin}:${process.env.PATH}` });
    const pid = daemon.child.pid!;
    // two calls: a daemon prepares a conversation's next sandbox from its second (preparedFrom)
    for (let i = 0; i < 2; i++) {
      const call = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo ran', network: 'off' }, turn: ownerTurn('chat-lingering') });
      expect(call.body, daemon.stderr()).toMatchObject({ ok: true, value: { stdout: 'ran\n' } });
    }
    // the policy's next sandbox, prepared ahead after the second call: its processes hold its run folder's FIFOs
    await until(() => lingering().length > 0, 'a prepared sandbox, and what its bwrap left behind');
    const code = await daemon.stop();
    const log = daemon.stderr();
    daemon = undefined;
    expect(code, log).toBe(0);
    // under load the stop can come while the sandbox is still being prepared: the same bound applies
    expect(log).toMatch(/WARNING: aalis: a (prepared sandbox|sandbox being prepared) \(.*\) did not end within \d+ ms of its kill; killed \d+ of its processes/);
    // what was left behind ran in the run's pids cgroup (bwrap was put there at its start): killed through it
    await until(() => lingering().length === 0, 'what was left behind to be killed', 10_000);
    expect(holdersOf(pid)).toEqual([]);
  });
});

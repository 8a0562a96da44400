// A sandbox whose end the service cannot see must not hang its close() (and so a daemon's stop).
// Once, in a full bench, a prepared sandbox's pid 1 outlived its bwrap, reparented to init, and
// kept the run folder's FIFOs open: close() waited for their end for ever. Here the same shape is
// made with real processes: a bwrap run without `--die-with-parent`, so the sandbox's pid 1 (which
// sets its parent-death signal only with that flag) survives the kill of the bwrap outside it.
import { chmodSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';
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
      console.log(warnings);
      expect(held.filter(running)).toEqual([]);
      expect(holdersUnder(s.tmpDir)).toEqual([]);
      expect(warnings.join('\n')).toMatch(/did not end within \d+ ms of its kill; killed \d+ of its processes/);
    } finally {
      if (!closed) for (const pid of holdersUnder(s.tmpDir)) process.kill(pid, 'SIGKILL'); // a failed test leaves nothing behind
    }
  });
});

// A process a run leaves behind (setsid, backgrounded) must not live on to meet the sandbox
// prepared for the next run of the same policy: it ends with its run, and the next run, taken
// from the prepared sandbox, sees only its own processes.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OverlayScene, overlayScene, req, until } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

const isRoot = process.getuid?.() === 0;

/** Pids of processes whose command line is exactly `command`. */
function processesWith(command: string): number[] {
  return readdirSync('/proc')
    .filter((n) => {
      try {
        return /^\d+$/.test(n) && readFileSync(`/proc/${n}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() === command;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!isRoot)('a process left by a run, and the next prepared sandbox', { timeout: 240_000 }, () => {
  let s: OverlayScene;
  let warm: LinuxSandbox;
  beforeAll(async () => {
    s = await overlayScene();
    warm = s.sandbox({ prepare: 'on' });
  });
  afterAll(async () => {
    await warm?.close();
    s?.cleanup();
  });

  it('ends with its run; the next run (prepared) sees none of it', async () => {
    const left = `sleep 66.${process.pid}`;
    const first = await warm.run(req(s, ['sh', '-c', `(setsid sh -c '${left}' </dev/null >/dev/null 2>&1 &); echo started`]));
    expect(first.stdout).toBe('started\n');
    await warm.preparationsSettled();
    // killed with its pid namespace when the run's init ended; 30 s (under its 66 s) only bounds a failure
    await until(() => processesWith(left).length === 0, 'the left process to end with its run', 30_000);
    const before = warm.preparedCounts();
    const next = await warm.run(req(s, ['sh', '-c', 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done']));
    expect(warm.preparedCounts().used).toBe(before.used + 1);
    expect(next.stdout).not.toContain(left);
  });
});

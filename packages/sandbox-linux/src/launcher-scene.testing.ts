import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { LAUNCHER_PY } from './launcher.helper.js';
import { type OverlayScene, overlayScene } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

/**
 * Pids of the launchers (launcher.helper.ts) whose daemon is `daemon`: their argv ends in its pid.
 * A launcher's own fork for a run has the same argv until it execs, and is not counted (a count
 * taken while one lived was off by one: a flaky test); a launcher whose daemon died is.
 */
export function launchersOf(daemon: number): number[] {
  const want = `-c\0${LAUNCHER_PY}\0${daemon}\0`;
  const parents = new Map<number, number>();
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (!readFileSync(`/proc/${n}/cmdline`, 'utf8').endsWith(want)) continue;
      // the parent's pid is the second field after the name, which ends at the last ')'
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      parents.set(Number(n), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return [...parents].filter(([, parent]) => !parents.has(parent)).map(([pid]) => pid);
}

/**
 * An overlay scene and its sandbox shared by the tests of one describe block: made before them
 * (`use` receives both), the sandbox closed and the scene removed after.
 */
export function sharedOverlaySandbox(use: (s: OverlayScene, sb: LinuxSandbox) => void): void {
  let s: OverlayScene | undefined;
  let sb: LinuxSandbox | undefined;
  beforeAll(async () => {
    s = await overlayScene();
    sb = s.sandbox();
    use(s, sb);
  });
  afterAll(async () => {
    await sb?.close();
    s?.cleanup();
  });
}

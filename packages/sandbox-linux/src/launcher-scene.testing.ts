import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { LAUNCHER_PY } from './launcher.helper.js';
import { type OverlayScene, overlayScene } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

/** Pids of the launchers (launcher.helper.ts) whose daemon is `daemon`: their argv ends in its pid. */
export function launchersOf(daemon: number): number[] {
  const want = `-c\0${LAUNCHER_PY}\0${daemon}\0`;
  const out: number[] = [];
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (readFileSync(`/proc/${n}/cmdline`, 'utf8').endsWith(want)) out.push(Number(n));
    } catch {
      // gone meanwhile
    }
  }
  return out;
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

// Prepared sandboxes (prepare: 'on') against a workspace changed between the preparation and the
// release in a way the argv does not show: bwrap resolved the cwd at the preparation, and the
// overlay keeps what it found. The run must be what a cold run gives at release time. Before, a
// cwd symlink pointed at the hidden ~/.ssh after the preparation ran the command in the old
// target (cold refuses to start there), and a cwd directory replaced by a new one of the same
// name showed the old one's files.
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxRunRequest, SandboxRunResult } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

const isRoot = process.getuid?.() === 0;

/** A run's result without what differs between two runs, or the error it threw (run folders named alike). */
async function outcome(sb: LinuxSandbox, r: SandboxRunRequest): Promise<unknown> {
  try {
    const x: SandboxRunResult = await sb.run(r);
    return { stdout: x.stdout, stderr: x.stderr, exitCode: x.exitCode, signal: x.signal };
  } catch (e) {
    return { error: (e as Error).message.replace(/aalis-sbx-[\w-]+/g, '<run>'), code: (e as { code?: string }).code };
  }
}

describe.skipIf(!isRoot)('a prepared sandbox, its cwd changed before the release', { timeout: 240_000 }, () => {
  let s: OverlayScene;
  let warm: LinuxSandbox;
  let cold: LinuxSandbox;
  beforeAll(async () => {
    s = await overlayScene();
    warm = s.sandbox({ prepare: 'on' });
    cold = s.sandbox();
  });
  afterAll(async () => {
    await warm?.close();
    await cold?.close();
    s?.cleanup();
  });

  /** Prepares `r`'s sandbox (a run of `true` first), runs `change`, then runs `r` warm and cold. */
  async function across(r: SandboxRunRequest, change: () => void) {
    await warm.run({ ...r, argv: ['true'] });
    await warm.preparationsSettled();
    const before = warm.preparedCounts();
    change();
    const w = await outcome(warm, r);
    const counts = warm.preparedCounts();
    return { warm: w, cold: await outcome(cold, r), discarded: counts.discarded === before.discarded + 1 && counts.used === before.used };
  }

  it('a cwd symlink pointed at the hidden ~/.ssh after the preparation: not used; the run is what cold gives', async () => {
    const dir = join(s.ws, 'swap');
    mkdirSync(join(dir, 'plain'), { recursive: true });
    symlinkSync('plain', join(dir, 'link'));
    try {
      const r = req(s, ['sh', '-c', 'pwd -P; cat id_ed25519; ls -a'], { cwd: join(dir, 'link') });
      const got = await across(r, () => {
        unlinkSync(join(dir, 'link'));
        symlinkSync(join(s.home, '.ssh'), join(dir, 'link'));
      });
      expect(got.discarded).toBe(true);
      expect(got.warm).toEqual(got.cold);
      expect(JSON.stringify(got.warm)).not.toContain('PRIVATE KEY');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a cwd directory replaced by a new one of the same name after the preparation: the run sees the new one, as cold', async () => {
    const dir = join(s.ws, 'replaced');
    mkdirSync(dir);
    writeFileSync(join(dir, 'old.txt'), 'old\n');
    try {
      const r = req(s, ['sh', '-c', 'ls; cat *.txt'], { cwd: dir });
      const got = await across(r, () => {
        renameSync(dir, `${dir}.before`);
        mkdirSync(dir);
        writeFileSync(join(dir, 'new.txt'), 'new\n');
      });
      expect(got.cold).toMatchObject({ stdout: 'new.txt\nnew\n', exitCode: 0 });
      expect(got.warm).toEqual(got.cold);
      expect(got.discarded).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.before`, { recursive: true, force: true });
    }
  });
});

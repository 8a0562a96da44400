// Prepared sandboxes (prepare: 'on') against a workspace changed between the preparation and the
// release in a way the argv does not show: bwrap resolved the cwd at the preparation, and the
// overlay keeps what it found. The run must be what a cold run gives at release time. Before, a
// cwd symlink pointed at the hidden ~/.ssh after the preparation ran the command in the old
// target (cold refuses to start there), and a cwd directory replaced by a new one of the same
// name showed the old one's files.
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxRunRequest, SandboxRunResult } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FANOTIFY_OPENS_PY } from './fanotify.testing.js';
import { type OverlayScene, overlayScene, req, until } from './scene.testing.js';
import type { LinuxSandbox } from './service.js';

const isRoot = process.getuid?.() === 0;

/**
 * Holds the first open of the directory argv[1] (fanotify, a permission event: the opener waits
 * for the answer) until the symlink argv[2] is pointed at argv[3]; then lets every open go on.
 */
const SWAP_AT_OPEN = `${FANOTIFY_OPENS_PY}
swapped = False
while True:
    buf, off = os.read(fd, 4096), 0
    while off < len(buf):
        size, _, _, _, _, efd, _ = struct.unpack_from("IBBHQii", buf, off)
        if not swapped:
            os.symlink(sys.argv[3], sys.argv[2] + ".new"); os.rename(sys.argv[2] + ".new", sys.argv[2]); swapped = True
            print("swapped", flush=True)
        os.write(fd, struct.pack("iI", efd, 1)); os.close(efd); off += size
`;

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

  it('a cwd symlink pointed elsewhere while the release\'s scan runs, after the scan read it: not used; the run is what cold gives', async () => {
    // the release's scan walks the workspace (the link read as it was), then the ancestors, the
    // data directory among them: its open is held until the link points elsewhere. Before, the path identity was
    // taken at the take, before the scan: it matched the preparation's, and the command ran in
    // the old target though the host's link pointed at the new one when it was released
    const dir = join(s.ws, 'swap-scan');
    for (const n of ['plain', 'other']) {
      mkdirSync(join(dir, n), { recursive: true });
      writeFileSync(join(dir, n, 'm.txt'), `${n}\n`);
    }
    symlinkSync('plain', join(dir, 'link'));
    const r = req(s, ['sh', '-c', 'pwd -P; cat m.txt'], { cwd: join(dir, 'link') });
    let swapper: ReturnType<typeof spawn> | undefined;
    try {
      await warm.run({ ...r, argv: ['true'] });
      await warm.preparationsSettled();
      const before = warm.preparedCounts();
      // a new entry there: the release's scan lists the data directory again (an unchanged listing
      // is kept). Not data/tmp, which a { path } rule hides whole: the scan does not list it
      writeFileSync(join(s.data, 'poke'), '');
      // started only now: the preparation's own scan opened it too
      swapper = spawn('python3', ['-c', SWAP_AT_OPEN, s.data, join(dir, 'link'), 'other'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let said = '';
      swapper.stdout!.on('data', (b: Buffer) => (said += b.toString()));
      const started = swapper;
      await until(() => said.includes('ready') || started.exitCode !== null, 'the swapper is ready');
      expect(said).toContain('ready');
      const w = await outcome(warm, r);
      expect(said).toContain('swapped');
      const counts = warm.preparedCounts();
      swapper.kill();
      await new Promise((resolve) => started.once('exit', resolve));
      const c = await outcome(cold, r);
      expect(c).toMatchObject({ stdout: `${join(dir, 'other')}\nother\n`, exitCode: 0 });
      expect(w).toEqual(c);
      expect(counts.discarded === before.discarded + 1 && counts.used === before.used).toBe(true);
    } finally {
      swapper?.kill();
      rmSync(join(s.data, 'poke'), { force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, type OverlayScene, overlayScene, req, until, workspacePolicy } from './scene.testing.js';

// The commit tells a host edit made during the run by the entry's change time (commit-conflicts.ts).
// On a network or FUSE file system the change time is the server's, cached or made up: here a real
// writable FUSE file system whose entries keep the stamps they had when first seen (an attribute
// cache), edited behind it as another client of the server would. With the change time trusted
// there, the command's version replaced the user's edit made during the run.
const FS = join(import.meta.dirname, 'fixtures', 'stale-ctime-fs.py');
const canMount = process.getuid?.() === 0 && existsSync('/dev/fuse') && spawnSync('/usr/bin/python3', ['-c', 'import fusepy'], { stdio: 'ignore' }).status === 0;

let s: OverlayScene;
let fuse: ChildProcess | undefined;
let ws: string;
let backing: string;

beforeAll(async () => {
  if (!canMount) return;
  s = await overlayScene();
  backing = join(s.root, 'backing');
  ws = join(s.root, 'fuse-ws');
  mkdirSync(backing);
  mkdirSync(ws);
  fuse = spawn('/usr/bin/python3', [FS, backing, ws], { stdio: 'ignore' });
  const end = Date.now() + 30_000;
  while (!readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${ws} `)) {
    if (Date.now() > end) throw new Error('the FUSE file system was not mounted in 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterAll(() => {
  if (!canMount) return;
  spawnSync('umount', ['-l', ws]);
  fuse?.kill('SIGKILL');
  s.cleanup();
});

// a FUSE file system cannot be idmapped (aalis-rootmap refuses it): the command runs as the host's root
const policy = () => workspacePolicy(s, { write: [ws, s.sessionTmp], unixSockets: [ws, s.sessionTmp] });

/** Runs `script` in the FUSE workspace; `meanwhile` edits the host while the command waits after its writes. */
async function during(script: string, meanwhile: () => void) {
  const go = gate(s);
  const run = s.sandbox({ rootUidMap: 'off' }).run(req(s, ['sh', '-c', `${script}; touch ready; ${go.wait}; rm ready`], { cwd: ws, policy: policy() }));
  await until(() => s.inUpper('ready'), 'the command wrote its ready file');
  meanwhile();
  go.open();
  return run;
}

describe('the commit on a file system whose change times the kernel does not keep', { timeout: 120_000 }, () => {
  it.skipIf(!canMount)("a file the command and another client both wrote during the run: the user's edit stays, the command's version is kept aside and said", async () => {
    writeFileSync(join(ws, 'h.txt'), 'orig\n'); // through the mount: its stamps are now cached
    const r = await during('echo command >> h.txt', () => writeFileSync(join(backing, 'h.txt'), 'user edit\n'));
    expect(readFileSync(join(ws, 'h.txt'), 'utf8')).toBe('user edit\n');
    expect(r.stderr).toContain(join(ws, 'h.txt'));
    expect(r.stderr).toContain('change times');
    expect(r.conflicts?.map((c) => c.path)).toContain(join(ws, 'h.txt'));
    const kept = r.conflicts?.find((c) => c.path === join(ws, 'h.txt'))?.keptAt;
    expect(kept && readFileSync(kept, 'utf8')).toBe('orig\ncommand\n');
  });

  it.skipIf(!canMount)('a file the command removed that another client edited meanwhile stays', async () => {
    writeFileSync(join(ws, 'k.txt'), 'orig\n');
    const r = await during('rm k.txt', () => writeFileSync(join(backing, 'k.txt'), 'user edit\n'));
    expect(readFileSync(join(ws, 'k.txt'), 'utf8')).toBe('user edit\n');
    expect(r.conflicts?.map((c) => c.path)).toContain(join(ws, 'k.txt'));
  });

  it.skipIf(!canMount)('new files are committed; an existing file the command changed is not written over unseen: kept aside and said', async () => {
    writeFileSync(join(ws, 'same.txt'), 'orig\n');
    writeFileSync(join(ws, 'equal.txt'), 'equal\n');
    const r = await s.sandbox({ rootUidMap: 'off' }).run(req(s, ['sh', '-c', 'echo new > n.txt; echo changed > same.txt; echo equal > equal.txt'], { cwd: ws, policy: policy() }));
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(ws, 'n.txt'), 'utf8')).toBe('new\n');
    expect(readFileSync(join(ws, 'same.txt'), 'utf8')).toBe('orig\n');
    const kept = r.conflicts?.find((c) => c.path === join(ws, 'same.txt'))?.keptAt;
    expect(kept && readFileSync(kept, 'utf8')).toBe('changed\n');
    expect(r.conflicts?.map((c) => c.path)).not.toContain(join(ws, 'equal.txt')); // the same bytes: nothing to commit
  });
});

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reusedScanCount } from './scan-reuse.js';
import { forgetKeptScans, type ScanOptions } from './scan.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox, type LinuxSandbox } from './service.js';

// A kept walk (scan-reuse.ts, and the file of scan-reuse-file.ts) is given again while every
// directory it listed keeps its device, inode and change time. That holds where the local kernel
// keeps a directory's change time: not on a network or FUSE file system, whose attributes are the
// server's, cached or made up (NFS's attribute cache, sshfs, many FUSE file systems). Here a real
// FUSE file system whose directories always report one change time: a `.env` made under it after
// a scan was kept showed in the next sandbox, since the kept walk said the directory held none.
const FS = join(import.meta.dirname, 'fixtures', 'frozen-ctime-fs.py');
const canMount = process.getuid?.() === 0 && existsSync('/dev/fuse') && spawnSync('/usr/bin/python3', ['-c', 'import fusepy'], { stdio: 'ignore' }).status === 0;

let s: Scene;
let sandbox: LinuxSandbox;
let daemonLike: LinuxSandbox;
let fuse: ChildProcess | undefined;
let mnt: string;
let backing: string;

beforeAll(async () => {
  if (!canMount) return;
  s = makeScene();
  backing = join(s.root, 'backing');
  mnt = join(s.home, 'mnt'); // a mount in the home (walked to a depth, a part per directory)
  mkdirSync(join(backing, 'sub'), { recursive: true });
  mkdirSync(mnt);
  fuse = spawn('/usr/bin/python3', [FS, backing, mnt], { stdio: 'ignore' });
  const end = Date.now() + 30_000;
  while (!readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${mnt} `)) {
    if (Date.now() > end) throw new Error('the FUSE file system was not mounted in 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  const options: ScanOptions = { home: s.home, reuseSettledMs: 0, noCache: true, reuseFile: join(s.data, 'cache', 'linux-scan-reuse.json') };
  sandbox = createLinuxSandbox({ hostWalks: 'inline', scan: options });
  // as a daemon scans: listings kept in memory between walks (host-walk.ts), no file
  daemonLike = createLinuxSandbox({ hostWalks: 'inline', scan: { home: s.home, reuseSettledMs: 0 } });
});

afterAll(async () => {
  if (!canMount) return;
  await sandbox.close();
  await daemonLike.close();
  spawnSync('umount', [mnt]);
  fuse?.kill('SIGKILL');
  s.cleanup();
});

describe('a kept walk on a file system whose directories do not show their changes', () => {
  it.skipIf(!canMount)('is not given again: a .env made there after a scan stays hidden from a real sandboxed cat', { timeout: 60_000 }, async () => {
    const env = join(mnt, 'sub', '.env');
    const home = reusedScanCount(s.home);
    for (let i = 0; i < 2; i++) {
      forgetKeptScans(); // a new process each time: only the file carries the walks over
      expect((await sandbox.run(req(s, ['true']))).exitCode).toBe(0);
    }
    expect(reusedScanCount(s.home)).toBe(home + 1); // the home's own listing (an ext4 or tmpfs here) still came from the file
    writeFileSync(join(backing, 'sub', '.env'), 'TOKEN=LEAKED\n'); // another client of the server, say
    expect(readFileSync(env, 'utf8')).toBe('TOKEN=LEAKED\n');
    const before = reusedScanCount(mnt);
    forgetKeptScans();
    const r = await sandbox.run(req(s, ['cat', env]));
    expect(r.stdout).not.toContain('LEAKED');
    expect(r.stdout).toBe(''); // an empty file stands in for it
    expect(reusedScanCount(mnt)).toBe(before); // walked again
    rmSync(join(backing, 'sub', '.env'));
    forgetKeptScans();
  });

  it.skipIf(!canMount)("nor is a directory's kept listing (a daemon's walks): a .env made there after a walk stays hidden", { timeout: 60_000 }, async () => {
    const env = join(mnt, 'sub', '.env');
    for (let i = 0; i < 2; i++) expect((await daemonLike.run(req(s, ['true']))).exitCode).toBe(0);
    writeFileSync(join(backing, 'sub', '.env'), 'TOKEN=LEAKED\n');
    try {
      const r = await daemonLike.run(req(s, ['cat', env]));
      expect(r.stdout).not.toContain('LEAKED');
      expect(r.stdout).toBe('');
    } finally {
      rmSync(join(backing, 'sub', '.env'));
    }
  });
});

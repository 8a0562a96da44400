import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostMountPoint, vanishedHostMount } from './vanished-mount.js';

const isRoot = process.getuid?.() === 0;
const remount = (path: string) => `bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount "/newroot${path}": No such file or directory`;

describe('a host mount gone during bwrap setup', () => {
  it('knows / and /proc as mount points, and a plain directory as none', () => {
    expect(hostMountPoint('/')).toBe(true);
    expect(hostMountPoint('/proc')).toBe(true);
    expect(hostMountPoint('/usr/share')).toBe(false);
  });

  it('is only the remount failure of bwrap, never another setup error', () => {
    expect(vanishedHostMount("bwrap: Can't mount proc on /newroot/proc: Operation not permitted")).toBe(false);
    expect(vanishedHostMount(remount('/proc'))).toBe(false); // still mounted: a real refusal, not retried
    expect(vanishedHostMount(remount('/no/such/dir/anywhere'))).toBe(true);
  });

  // a real mount (with a space in its name, written \040 in the mount table) made and taken away
  it.skipIf(!isRoot)('follows a real tmpfs mounted and unmounted', () => {
    const base = mkdtempSync(join(tmpdir(), 'aalis-vanish-'));
    const dir = join(base, 'a dir');
    mkdirSync(dir);
    try {
      execFileSync('mount', ['-t', 'tmpfs', 'none', dir]);
      expect(hostMountPoint(dir)).toBe(true);
      expect(vanishedHostMount(remount(dir))).toBe(false);
      execFileSync('umount', [dir]);
      expect(hostMountPoint(dir)).toBe(false);
      expect(vanishedHostMount(remount(dir))).toBe(true);
    } finally {
      try {
        execFileSync('umount', [dir], { stdio: 'ignore' });
      } catch {}
      rmSync(base, { recursive: true, force: true });
    }
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeRunFoldersFs, runFoldersFs } from './run-folders-fs.js';

describe("the runs' temp directory's file system (aalis doctor)", () => {
  it('is the one util-linux findmnt names for the temp directory', () => {
    const found = runFoldersFs();
    const findmnt = execFileSync('findmnt', ['-n', '-o', 'FSTYPE,SOURCE', '-T', tmpdir()], { encoding: 'utf8' }).trim().split(/\s+/);
    expect([found?.fstype, found?.source]).toEqual(findmnt);
  });

  it.skipIf(process.getuid?.() !== 0)('names a tmpfs mounted on a folder as one, below the file system above it (as root)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aalis-runs-fs-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'aalis-test-tmpfs', dir]);
    try {
      expect(runFoldersFs(join(dir))).toMatchObject({ fstype: 'tmpfs', source: 'aalis-test-tmpfs' });
      expect(describeRunFoldersFs(runFoldersFs(dir))).toContain('tmpfs, in memory');
    } finally {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what ext4 without a journal costs, and nothing for a journaled one', () => {
    expect(describeRunFoldersFs({ dir: '/tmp', source: '/dev/vda', fstype: 'ext4', journal: false })).toContain('ext4 without a journal: making and removing');
    expect(describeRunFoldersFs({ dir: '/tmp', source: '/dev/vda', fstype: 'ext4', journal: true })).toBe("runs' temp directory: /tmp on /dev/vda (ext4)\n");
  });
});

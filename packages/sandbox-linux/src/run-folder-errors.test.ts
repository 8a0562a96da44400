// A daemon temp directory that has run out of room: the run fails closed, nothing of the command
// runs, and the error names the temp directory, not the policy (a full temp dir once read as
// "the policy cannot be enforced here ... check the policy").
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)('a daemon temp directory out of room (as root: a small tmpfs)', { timeout: 60_000 }, () => {
  let s: Scene;
  let tmpDir: string;
  beforeAll(() => {
    s = makeScene();
    tmpDir = join(s.root, 'small-tmp');
    mkdirSync(tmpDir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,nr_inodes=64,mode=0700', 'tmpfs', tmpDir]);
  });
  afterAll(() => {
    try {
      execFileSync('umount', ['-l', tmpDir]);
    } finally {
      s?.cleanup();
    }
  });

  it.each(['overlay', 'look'] as const)('every inode used (%s model): the run is refused with the temp directory named, and the command never ran', async (hostModel) => {
    const marker = join(s.ws, `ran-${hostModel}.txt`);
    const sb = createLinuxSandbox({ tmpDir, hostModel });
    const fill = join(tmpDir, `fill-${hostModel}`);
    try {
      // probed and run once while there is room (the probe's own files are the temp directory's too)
      expect((await sb.run(req(s, ['true']))).exitCode).toBe(0);
      mkdirSync(fill);
      for (let i = 0; ; i++) {
        try {
          writeFileSync(join(fill, `f${i}`), '');
        } catch {
          break;
        }
      }
      await expect(sb.run(req(s, ['sh', '-c', `echo ran > ${marker}`]))).rejects.toThrow(hostModel === 'look' ? /could not be made in the daemon's temp directory/ : /overlay layers could not be made/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(fill, { recursive: true, force: true });
      await sb.close();
    }
    // the refused run's folder is gone with it, and the first run's once its tear-down is done (close waits for it)
    expect(readdirSync(tmpDir).filter((n) => n.startsWith('aalis-sbx-'))).toEqual([]);
  });
});

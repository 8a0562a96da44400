// A daemon temp directory where nothing can be made any more: the run fails closed, nothing of the
// command runs, and the error names the temp directory, not the policy (a full temp dir once read as
// "the policy cannot be enforced here ... check the policy"). The directory is made immutable
// (chattr +i, which holds for root too), not a small tmpfs mounted: a mount in the daemon's
// namespace would make every launcher's kept view drop and be built again, in tests running beside.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { findExecutable } from './tools.js';

const chattr = process.getuid?.() === 0 ? findExecutable('chattr') : undefined;

describe.skipIf(chattr === undefined)('a daemon temp directory nothing can be made in (as root: chattr +i)', { timeout: 60_000 }, () => {
  let s: Scene;
  beforeAll(() => {
    s = makeScene();
  });
  afterAll(() => s?.cleanup());

  it.each(['overlay', 'look'] as const)('%s model: the run is refused with the temp directory named, and the command never ran', async (hostModel) => {
    const tmpDir = join(s.root, `frozen-tmp-${hostModel}`);
    mkdirSync(tmpDir);
    const marker = join(s.ws, `ran-${hostModel}.txt`);
    const sb = createLinuxSandbox({ tmpDir, hostModel });
    let frozen = false;
    try {
      // probed and run once while it can be written (the probe's own files are the temp directory's too)
      expect((await sb.run(req(s, ['true']))).exitCode).toBe(0);
      try {
        execFileSync(chattr!, ['+i', tmpDir], { stdio: 'ignore' });
        frozen = true;
      } catch {
        return; // a file system without the immutable flag: nothing to check here
      }
      await expect(sb.run(req(s, ['sh', '-c', `echo ran > ${marker}`]))).rejects.toThrow(hostModel === 'look' ? /could not be made in the daemon's temp directory/ : /overlay layers could not be made/);
      expect(existsSync(marker)).toBe(false);
    } finally {
      if (frozen) execFileSync(chattr!, ['-i', tmpDir]);
      await sb.close();
    }
    // the first run's folder is gone once its tear-down is done (close waits for it); the refused one never was
    expect(readdirSync(tmpDir).filter((n) => n.startsWith('aalis-sbx-'))).toEqual([]);
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * What the commit carries besides contents (found by an attack, h101): a folder's mode is a write
 * to that folder and is judged as one (`chmod 777 .git` was committed unjudged, and another local
 * user could then swap .git/hooks for theirs); nothing is committed writable by every local user;
 * a sparse file stays sparse (a 1 GiB `truncate` was written out dense on the host); a copy that
 * fails leaves no temp behind. Real sandboxed commands, the overlay model.
 */

let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const sandbox = (extra: Parameters<typeof createLinuxSandbox>[0] = {}) => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone'), ...extra });
const policy = (extra: Partial<SandboxPolicy> = {}) => workspacePolicy(s, extra);
const modeOf = (path: string) => statSync(path).mode & 0o7777;

describe('the commit judges modes and keeps files as they are', { timeout: 120_000 }, () => {
  it("a folder's mode is judged: a landing's is refused, one every local user could write in is refused, an ordinary change commits", async () => {
    mkdirSync(join(s.ws, 'plain'));
    mkdirSync(join(s.ws, 'shared'));
    const git = join(s.ws, '.git');
    const before = { git: modeOf(git), shared: modeOf(join(s.ws, 'shared')) };
    const r = await sandbox().run(req(s, ['sh', '-c', 'chmod 777 .git && chmod 777 shared && chmod 750 plain && mkdir -m 777 open && echo x > open/f'], { policy: policy() }));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(modeOf(git)).toBe(before.git);
    expect(r.stderr).toMatch(/\.git: the command's change of its mode \(to 777\) was not committed: it is a protected name/);
    expect(modeOf(join(s.ws, 'shared'))).toBe(before.shared);
    expect(r.stderr).toMatch(/shared: the command's change of its mode \(to 777\) was not committed: it would let every user of this machine write there/);
    expect(modeOf(join(s.ws, 'plain'))).toBe(0o750);
    // a new folder lands, without the write bit for others (said)
    expect(modeOf(join(s.ws, 'open'))).toBe(0o775);
    expect(existsSync(join(s.ws, 'open', 'f'))).toBe(true);
    expect(r.stderr).toMatch(/open: the folder was committed without the write bit for other users/);
  });

  it('a file made writable by every local user is committed without that bit, said', async () => {
    writeFileSync(join(s.ws, 'script.sh'), 'echo hi\n');
    const r = await sandbox().run(req(s, ['sh', '-c', 'chmod 666 script.sh && echo new > new.txt && chmod 646 new.txt'], { policy: policy() }));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(modeOf(join(s.ws, 'script.sh'))).toBe(0o664);
    expect(modeOf(join(s.ws, 'new.txt'))).toBe(0o644);
    expect(r.stderr).toMatch(/script\.sh: the file was committed without the write bit for other users/);
  });

  // found by an attack (h104): a named pipe was made anew with the command's mode as it was
  it('a named pipe made writable by every local user is committed without that bit, said', async () => {
    const r = await sandbox().run(req(s, ['sh', '-c', 'mkfifo -m 666 pipe && mkdir pipes && mkfifo -m 622 pipes/p'], { policy: policy() }));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(statSync(join(s.ws, 'pipe')).isFIFO()).toBe(true);
    expect(modeOf(join(s.ws, 'pipe'))).toBe(0o664);
    expect(modeOf(join(s.ws, 'pipes', 'p'))).toBe(0o620);
    expect(r.stderr).toMatch(/pipe: the file was committed without the write bit for other users/);
  });

  it('a sparse file stays sparse on the host: its holes are not written out', async () => {
    writeFileSync(join(s.ws, 'old.txt'), 'old\n'); // a file the host has: committed by copy
    const r = await sandbox().run(req(s, ['sh', '-c', 'truncate -s 256M old.txt && truncate -s 256M new.bin && printf tail >> new.bin'], { policy: policy() }));
    expect(r.exitCode, r.stderr).toBe(0);
    for (const [name, size] of [
      ['old.txt', 256 * 1024 * 1024],
      ['new.bin', 256 * 1024 * 1024 + 4],
    ] as const) {
      const st = statSync(join(s.ws, name));
      expect(st.size).toBe(size);
      expect(st.blocks * 512, name).toBeLessThan(1024 * 1024); // allocated: well under a megabyte
    }
  });

  it('a file of a terabyte of holes is committed without reading them (its commit would otherwise hold the walks thread for an hour)', async () => {
    writeFileSync(join(s.ws, 'huge.bin'), 'old\n'); // the host has it: committed by copy
    const r = await sandbox().run(req(s, ['sh', '-c', 'truncate -s 1T huge.bin && printf end >> huge.bin'], { policy: policy() }));
    expect(r.exitCode, r.stderr).toBe(0);
    const st = statSync(join(s.ws, 'huge.bin'));
    expect(st.size).toBe(2 ** 40 + 3);
    expect(st.blocks * 512).toBeLessThan(1024 * 1024);
  });

  it('as root: a copy that fails for want of space leaves no temp in the workspace, and says what was not committed', async () => {
    if (process.getuid?.() !== 0) return; // a small file system of its own needs a mount; CI runs as root
    const ws = mkdtempSync(join(s.root, 'small-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', ws]);
    try {
      writeFileSync(join(ws, 'big.bin'), 'old\n');
      const p = policy({ write: [ws, s.sessionTmp], unixSockets: [ws, s.sessionTmp] });
      const r = await sandbox().run(req(s, ['sh', '-c', 'head -c 3000000 /dev/urandom > big.bin && echo small > small.txt'], { policy: p, cwd: ws }));
      expect(r.stderr).toMatch(/big\.bin could not be committed/);
      expect(readdirSync(ws).filter((n) => n.startsWith('.aalis-commit-'))).toEqual([]);
      expect(statSync(join(ws, 'big.bin')).size).toBe(4); // the host's version stays whole
    } finally {
      execFileSync('umount', [ws]);
    }
  });
});

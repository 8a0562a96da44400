import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { Launcher } from './launcher.js';
import { findSystemTool, NFT_LIBRARY } from './loopback-filter.js';
import { launcherFilter } from './net-helper.js';
import { findPython } from './system-interpreters.js';
import { makeScene, req, type Scene, until, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

let s: Scene;
let tmpDir: string;

beforeAll(() => {
  s = makeScene();
  tmpDir = join(s.root, 'daemon-tmp'); // this file's run folders, so its helpers are told from others'
  mkdirSync(tmpDir);
});
afterAll(() => s.cleanup());

/** A process's parent pid, or undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * slirp4netns processes of this file's services, by `comm` (kept while a process exits and as a
 * zombie): children of this process (started by its fork), or holding a FIFO in this file's run
 * folders (started by a launcher, which may be gone and the helper reparented).
 */
function ourSlirps(): { pid: number; parent: number | undefined }[] {
  const found: { pid: number; parent: number | undefined }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'slirp4netns') continue;
      const parent = parentOf(pid);
      let fifo = false;
      try {
        fifo = readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(`${tmpDir}/`));
      } catch {
        // exiting: its fds are going
      }
      if (parent === process.pid || fifo) found.push({ pid, parent });
    } catch {
      // gone between the listing and the read
    }
  }
  return found;
}

/** `sleep <token>` itself runs (bwrap's own argv holds the token too, before the sandbox is released). */
function commandRuns(token: string): boolean {
  return readdirSync('/proc').some((entry) => {
    try {
      const [file, arg] = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      return (file === 'sleep' || file === '/bin/sleep') && arg === token;
    } catch {
      return false;
    }
  });
}

const asRoot = process.getuid?.() === 0;

describe('network on: who starts slirp4netns, and that close() waits for its end', { timeout: 120_000 }, () => {
  // the launcher runs only for a root daemon's mapped runs (launcher.ts); elsewhere the daemon forks
  it.each([
    { launcher: 'on' as const, byLauncher: asRoot },
    { launcher: 'off' as const, byLauncher: false },
  ])('launcher $launcher', async ({ launcher, byLauncher }) => {
    // slirp4netns that leaves a child holding its stderr for a while: its end, which the run's
    // result does not wait for, is what close() must wait for
    const linger = `5.${process.pid}${Date.now() % 100_000}`;
    const slirp4netns = join(s.root, `slirp-${launcher}`);
    writeFileSync(slirp4netns, `#!/bin/sh\n/bin/sleep ${linger} &\nexec ${findSystemTool('slirp4netns')} "$@"\n`, { mode: 0o755 });
    const sb = createLinuxSandbox({ tmpDir, launcher, slirp4netns });
    const token = `600.${process.pid}${Date.now() % 100_000}`;
    const abort = new AbortController();
    const running = sb.run(req(s, ['sleep', token], { policy: workspacePolicy(s, { network: 'on' }), signal: abort.signal }));
    await until(() => commandRuns(token), 'the command runs (its network was set up before it)');
    const slirps = ourSlirps();
    expect(slirps).toHaveLength(1);
    const { parent } = slirps[0]!;
    if (byLauncher) {
      // the launcher's python, a child of this process: no fork of the daemon for the helper
      expect(parent).not.toBe(process.pid);
      expect(parentOf(parent!)).toBe(process.pid);
      expect(readFileSync(`/proc/${parent}/cmdline`, 'utf8')).toMatch(/python/);
    } else expect(parent).toBe(process.pid);
    abort.abort();
    const r = await running;
    expect(r.signal).toBe('SIGKILL');
    // the result does not wait for slirp4netns's end (its tap device's removal); close() does
    await sb.close();
    expect(ourSlirps()).toEqual([]);
    expect(commandRuns(linger)).toBe(false);
  });
});

describe("the launcher's localPorts filter (its nft op)", { timeout: 60_000 }, () => {
  // a table of its own, so that a failure of the guard leaves nothing on the host that matters
  const table = `aalis_guard_${process.pid}`;
  const nft = findSystemTool('nft');
  it.skipIf(!asRoot || !nft)("never goes into the launcher's own network namespace: refused, the host's ruleset untouched", async () => {
    const launcher = new Launcher(findPython()!);
    try {
      const apply = launcherFilter(launcher, join(tmpDir, `guard-${Date.now()}`), NFT_LIBRARY);
      // this process shares the launcher's (the host's) network namespace
      const run = await apply(process.pid, `table inet ${table} {\n}\n`);
      let stderr = '';
      run.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const end = await run.ended;
      expect(end.exitCode).toBe(125);
      expect(stderr).toContain("the sandbox shares the launcher's network namespace");
      expect((await execa(nft!, ['list', 'table', 'inet', table], { reject: false })).exitCode).not.toBe(0);
    } finally {
      launcher.close();
      await execa(nft!, ['delete', 'table', 'inet', table], { reject: false });
    }
  });
});

import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostThread, HostWalkError } from './host-thread.js';
import { makeScene, type Scene, untilProcess, workspacePolicy } from './scene.testing.js';
import { HOST_WORKER_NICE } from './thread-priority.js';

/** A thread's nice value, from its stat (field 19; the fields after the command's closing parenthesis). */
const niceOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);

/** The nice value of each thread of this process, by tid. */
function niceOfThreads(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      nices.set(Number(tid), niceOf(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')));
    } catch {
      // ended meanwhile
    }
  }
  return nices;
}

let s: Scene;
const thread = new HostThread();
beforeAll(() => {
  s = makeScene();
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/.env'), 'X=1');
});
afterAll(async () => {
  await thread.close();
  s.cleanup();
});

describe('the host thread', () => {
  // the walks and chores yield to the daemon's event loop when both want a CPU (thread-priority.ts)
  it('runs its workers at a lower priority than the thread that posts to them', async () => {
    const own = niceOf(readFileSync('/proc/thread-self/stat', 'utf8'));
    const before = niceOfThreads();
    const threads = new HostThread();
    try {
      await threads.run({ op: 'scan', policy: workspacePolicy(s), cwd: s.ws, options: { home: s.home }, skip: [] });
      await threads.run({ op: 'removeLayers', dir: join(s.root, 'no-such-layers') });
      const started = [...niceOfThreads()].filter(([tid]) => !before.has(tid));
      // one thread per lane at the lower priority (node may start helper threads of its own beside them)
      expect(started.filter(([, nice]) => nice === HOST_WORKER_NICE).length).toBeGreaterThanOrEqual(2);
      expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8'))).toBe(own);
      expect(HOST_WORKER_NICE).toBeGreaterThan(own);
    } finally {
      await threads.close();
    }
  });

  it('scans and looks on a worker thread, not on the caller', async () => {
    const policy = workspacePolicy(s);
    const facts = await thread.run({ op: 'scan', policy, cwd: s.ws, options: { home: s.home }, skip: [] });
    expect(facts.found.map((f) => f.path)).toContain(join(s.ws, 'a/b/.env'));
    expect(facts.kinds.get(s.ws)).toBe('dir'); // a Map survives the trip
    writeFileSync(join(s.ws, 'a/.envrc'), 'x');
    const report = await thread.run({ op: 'look', policy, before: facts, keep: [] });
    expect(report.removed).toEqual([join(s.ws, 'a/.envrc')]);
    expect(thread.started('walks')).toBe(true);
  });

  it('says what the host model holds: the listings it kept, and its heap', async () => {
    await thread.run({ op: 'scan', policy: workspacePolicy(s), cwd: s.ws, options: { home: s.home }, skip: [] });
    const m = await thread.run({ op: 'memory' });
    expect(m.keptDirectories).toBeGreaterThanOrEqual(3); // the workspace, a, a/b at least
    expect(m.heapUsed).toBeGreaterThan(0);
  });

  it('removes a run\'s overlay layers, their mode-000 work directory included, off the caller', async () => {
    const layers = join(s.root, 'layers');
    mkdirSync(join(layers, '0/work/work'), { recursive: true });
    writeFileSync(join(layers, '0/work/work/x'), '');
    chmodSync(join(layers, '0/work/work'), 0);
    await thread.run({ op: 'removeLayers', dir: layers });
    expect(existsSync(layers)).toBe(false);
  });

  it('inline, scans and looks on the calling thread and starts no worker', async () => {
    const inline = new HostThread('inline');
    const policy = workspacePolicy(s);
    const facts = await inline.run({ op: 'scan', policy, cwd: s.ws, options: { home: s.home }, skip: [] });
    expect(facts.found.map((f) => f.path)).toContain(join(s.ws, 'a/b/.env'));
    writeFileSync(join(s.ws, 'a/.envrc'), 'x');
    const report = await inline.run({ op: 'look', policy, before: facts, keep: [] });
    expect(report.removed).toContain(join(s.ws, 'a/.envrc'));
    expect(inline.started('walks')).toBe(false);
    expect(inline.started('chores')).toBe(false);
    await inline.close();
  });

  it('hands an error of the walk back with its message, so the run fails closed', async () => {
    const job = thread.run({ op: 'scan', policy: workspacePolicy(s), cwd: s.ws, options: { home: s.home, maxEntries: 2 }, skip: [] });
    await expect(job).rejects.toBeInstanceOf(HostWalkError);
    await expect(job).rejects.toThrow(/more than 2 entries/);
  });

  it('judges each job by its own policy: a policy equal in all but one rule is never taken for one seen before', async () => {
    writeFileSync(join(s.ws, 'a/b/secret.key'), 'k');
    const base = workspacePolicy(s);
    const stricter = workspacePolicy(s, { readDeny: [...base.readDeny, { pattern: '^.*/[^/]*\\.key$' }] });
    const found = async (policy: typeof base) => (await thread.run({ op: 'scan', policy, cwd: s.ws, options: { home: s.home }, skip: [] })).found.map((f) => f.path);
    for (let round = 0; round < 2; round++) {
      expect(await found(base)).not.toContain(join(s.ws, 'a/b/secret.key'));
      expect(await found(stricter)).toContain(join(s.ws, 'a/b/secret.key'));
    }
  });

  it("removes layers on its own thread: the next call's scan does not queue behind a removal that waits", async () => {
    // A removal that waits until the test says so: layers deeper than PATH_MAX make removeLayers
    // fall back to rm(1), found on PATH, and this rm waits for a release file before removing.
    const bin = join(s.root, 'slow-bin');
    mkdirSync(bin);
    const release = join(s.root, 'release');
    const token = `aalis-slow-rm-${process.pid}`;
    writeFileSync(join(bin, 'rm'), `#!/bin/sh\nsh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' ${token} '${release}'\nexec /bin/rm "$@"\n`, { mode: 0o755 });
    const layers = join(s.root, 'deep-layers');
    mkdirSync(layers);
    const deep = "import os, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfor _ in range(24):\n  os.mkdir('d' * 200, dir_fd=fd)\n  fd = os.open('d' * 200, os.O_RDONLY, dir_fd=fd)\nos.close(os.open('x', os.O_CREAT | os.O_WRONLY, dir_fd=fd))\n";
    execFileSync('python3', ['-c', deep, layers]); // by directory fd: the path is longer than PATH_MAX
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`; // the workers copy the environment when they start
    const threads = new HostThread();
    try {
      let removed = false;
      const removal = threads.run({ op: 'removeLayers', dir: layers }).then(() => (removed = true));
      await untilProcess(token); // the removal is under way, and waits
      const facts = await threads.run({ op: 'scan', policy: workspacePolicy(s), cwd: s.ws, options: { home: s.home }, skip: [] });
      expect(facts.kinds.get(s.ws)).toBe('dir');
      expect(removed).toBe(false); // the scan was answered while the removal still waited
      writeFileSync(release, '');
      await removal;
      expect(existsSync(layers)).toBe(false);
    } finally {
      writeFileSync(release, '');
      process.env.PATH = path;
      await threads.close();
      execFileSync('/bin/rm', ['-rf', '--', layers]); // left by a failure, too deep for the scene's cleanup
    }
  }, 90_000);
});

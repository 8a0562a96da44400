import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostSocketFacts, listedNames, listedSockets, socketHomes } from './host-sockets.js';
import { SCENE_PARENT } from './scene.testing.js';

const HEADER = 'Num       RefCount Protocol Flags    Type St Inode Path\n';

describe('listedSockets', () => {
  it.each([
    ['a listening socket', '0000000000000000: 00000002 00000000 00010000 0001 01 42744 /run/containerd/s/abc', [{ bound: true, inode: '42744', raw: '/run/containerd/s/abc' }]],
    ['an accepted connection (its listener\'s name)', '0000000000000000: 00000003 00000000 00000000 0001 03 43562 /run/x.sock', [{ bound: false, inode: '43562', raw: '/run/x.sock' }]],
    ['a relative name', '0000000000000000: 00000002 00000000 00010000 0001 01 7 rel.sock', [{ bound: true, inode: '7', raw: 'rel.sock' }]],
    ['a name with spaces', '0000000000000000: 00000002 00000000 00010000 0001 01 8 /srv/a b.sock', [{ bound: true, inode: '8', raw: '/srv/a b.sock' }]],
    ['an abstract socket (per network namespace)', '0000000000000000: 00000002 00000000 00010000 0001 01 9 @/tmp/.X11-unix/X0', []],
    ['an unbound socket', '0000000000000000: 00000002 00000000 00000000 0002 01 10', []],
  ])('%s', (_, line, expected) => {
    expect(listedSockets(HEADER + line)).toEqual(expected);
  });
});

describe('hostSocketFacts', () => {
  it('reads at least this network namespace, and takes /run as a socket home', () => {
    const f = hostSocketFacts();
    expect(f.netnsRead).toBeGreaterThanOrEqual(1);
    expect(socketHomes().map((h) => h.path)).toContain('/run');
    expect(f.sockets.every((p) => !p.startsWith('/run/'))).toBe(true); // those are covered by the home
  });
});

/** A Python listener bound at `path`; resolves once it listens. */
function listen(path: string): Promise<ChildProcess> {
  const p = spawn('python3', ['-c', 'import socket,sys,time\ns=socket.socket(socket.AF_UNIX);s.bind(sys.argv[1]);s.listen(1);print("ready",flush=True);time.sleep(60)', path], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    p.stdout!.once('data', () => resolve(p));
    p.once('exit', (code) => reject(new Error(`listener exited ${code}`)));
  });
}

describe('the socket list kept between runs', { timeout: 30_000 }, () => {
  const line = (inode: number, path: string) => `0000000000000000: 00000002 00000000 00010000 0001 01 ${inode} ${path}`;

  it('is reused while the lists read the same, and worked out again when a line or a namespace is added', () => {
    const lists = [HEADER + line(1, '/srv/a.sock')];
    const first = listedNames(lists, 1);
    expect(listedNames([...lists], 1)).toBe(first); // same bytes: the kept names
    const bound = listedNames([`${lists[0]}\n${line(2, '/srv/b.sock')}`], 1);
    expect(bound).not.toBe(first);
    expect([...bound.count.keys()]).toEqual(['/srv/a.sock', '/srv/b.sock']);
    const netns = listedNames([lists[0]!, HEADER + line(3, '/srv/c.sock')], 2);
    expect([...netns.count.keys()]).toContain('/srv/c.sock');
  });

  it('a socket bound, or renamed, after the list was kept is still found', async () => {
    const dir = realpathSync(mkdtempSync(join(SCENE_PARENT, 'aalis-sock-')));
    const daemons: ChildProcess[] = [];
    try {
      hostSocketFacts();
      hostSocketFacts(); // the list is kept now
      const sock = join(dir, 'late.sock');
      daemons.push(await listen(sock));
      expect(hostSocketFacts().sockets).toContain(sock);
      // a rename changes no list: the name is looked at on every call, never kept
      renameSync(sock, join(dir, 'moved.sock'));
      const after = hostSocketFacts();
      expect(after.sockets).not.toContain(sock);
      expect(after.socketDirs).toContain(dir);
    } finally {
      for (const d of daemons) d.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

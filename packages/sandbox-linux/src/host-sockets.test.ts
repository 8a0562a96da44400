import { describe, expect, it } from 'vitest';
import { hostSocketFacts, listedSockets, socketHomes } from './host-sockets.js';

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

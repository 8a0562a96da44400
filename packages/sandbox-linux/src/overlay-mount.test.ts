import { describe, expect, it } from 'vitest';
import { overlayConflict, overlayRefusal, overlayRootsOf, socketBinds } from './overlay-mount.js';
import { ENV_FILES } from '@aalis/api-reach';

const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '30 22 0:25 / /proc rw,nosuid shared:2 - proc proc rw',
  '41 22 0:40 / /home/ada/ws/cache\\040dir rw shared:9 - tmpfs tmpfs rw',
].join('\n');

describe('which roots can be overlays', () => {
  it.each([
    ['a plain path', '/home/ada/ws', undefined],
    ['a comma', '/home/ada/a,b', /cannot carry/],
    ['a colon', '/home/ada/a:b', /cannot carry/],
    ['a backslash', '/home/ada/a\\b', /cannot carry/],
    ['a newline', '/home/ada/a\nb', /cannot carry/],
  ])('%s', (_, root, want) => {
    const got = overlayRefusal(root);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });

  it.each([
    ['roots apart from the temp dir, nothing mounted under them', ['/home/ada/other'], '/tmp', undefined],
    ['the temp dir inside a root', ['/home/ada'], '/home/ada/.tmp', /lies in the writable root/],
    ['the temp dir is a root', ['/tmp'], '/tmp', /lies in the writable root/],
    ['a root beside the run folders in the temp dir', ['/tmp/ws'], '/tmp', undefined],
    ['a file system mounted under a root (an escaped name)', ['/home/ada/ws'], '/tmp', /mounted at \/home\/ada\/ws\/cache dir/],
    ['a mount at the root itself is its lower layer', ['/proc'], '/tmp', undefined],
  ])('%s', (_, roots, tmp, want) => {
    const got = overlayConflict(roots, tmp, MOUNTINFO);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });

  it('nested write roots get one overlay, the outer one', () => {
    const policy = { readDeny: [ENV_FILES], readAllowWithin: [], write: ['/w/ws/sub', '/w/ws', '/w/tmp'], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [] } as const;
    expect(overlayRootsOf(policy)).toEqual(['/w/tmp', '/w/ws']);
  });

  it('sockets under an overlay root are bound back from its host directory', () => {
    const o = { root: '/w/ws', upper: '/r/0/upper', work: '/r/0/work', lower: '/r/0/lower' };
    expect(socketBinds([o], ['/w/ws/dev.sock', '/elsewhere/a.sock', '/w/wsx/b.sock'])).toEqual([{ src: '/r/0/lower/dev.sock', dst: '/w/ws/dev.sock' }]);
  });
});

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOverlayTools, overlayConflict, overlayRefusal, overlayRootsOf, socketBinds } from './overlay-mount.js';
import { RunOverlays } from './overlay-run.js';
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

describe("a run's layer directories", () => {
  it('are upper and work for each root; the lower alias point only for a root that holds a socket bound back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aalis-layers-'));
    try {
      const [ws, cache] = [join(dir, 'ws'), join(dir, 'cache')];
      for (const d of [ws, cache]) mkdirSync(d);
      const tools = findOverlayTools() ?? { unshare: 'unshare', mount: 'mount', umount: 'umount' };
      const policy = { readDeny: [], readAllowWithin: [], write: [ws, cache], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [] } as const;
      const plain = await RunOverlays.create(tools, policy, join(dir, 'run-a'), []);
      for (const o of plain.overlays) expect(readdirSync(join(o.upper, '..')).sort()).toEqual(['upper', 'work']);
      const socket = join(cache, 'dev.sock');
      const bound = await RunOverlays.create(tools, policy, join(dir, 'run-b'), [socket]);
      const [c, w] = [bound.overlays.find((o) => o.root === cache)!, bound.overlays.find((o) => o.root === ws)!];
      expect(existsSync(c.lower)).toBe(true);
      expect(existsSync(w.lower)).toBe(false);
      // and the mount step is told so: an alias for the root with the socket, '-' for the other
      const ops = bound.command('bwrap', []);
      expect(ops.join(' ')).toContain(`${cache} ${c.upper} ${c.work} ${c.lower}`);
      expect(ops.join(' ')).toContain(`${ws} ${w.upper} ${w.work} -`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});


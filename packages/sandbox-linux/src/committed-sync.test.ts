import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rootsReceiving, syncFileSystems } from './committed-sync.js';
import { type OverlayScene, overlayScene, req } from './scene.testing.js';

/*
 * The overlays are `volatile` (their unmount no longer writes out the whole file system under the
 * layers at every run's end); what a run commits is synced by `sync --file-system` before its
 * result instead. Real sandboxed processes; `sync` is the real coreutils one, behind a wrapper
 * that records how it was called (the service takes its path as an option, as it does bwrap's).
 */

let s: OverlayScene;
let log: string;
let wrapper: string;
let failing: string;
beforeAll(async () => {
  s = await overlayScene();
  log = join(s.root, 'sync.log');
  wrapper = join(s.root, 'sync-recording');
  writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${log}'\nexec /bin/sync "$@"\n`);
  chmodSync(wrapper, 0o755);
  failing = join(s.root, 'sync-failing');
  writeFileSync(failing, '#!/bin/sh\necho "sync: cannot sync here" >&2\nexit 1\n');
  chmodSync(failing, 0o755);
});
afterAll(() => s?.cleanup());

const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

describe('the overlay is volatile; a commit is synced before the result', { timeout: 120_000 }, () => {
  it("every run's overlay is mounted volatile: the command sees it in its workspace's mount options", async () => {
    const sb = s.sandbox({ sync: wrapper });
    try {
      const r = await sb.run(req(s, ['cat', '/proc/self/mountinfo']));
      expect(r.exitCode).toBe(0);
      const line = r.stdout.split('\n').find((l) => l.split(' ')[4] === s.ws);
      expect(line, `no mount at ${s.ws} in:\n${r.stdout}`).toBeDefined();
      const [, fs, , superOptions] = line!.split(' - ')[1]!.match(/^(\S+) (\S+) (\S+)$/) ?? [];
      expect(fs).toBe('overlay');
      // `volatile`, or `fsync=volatile` where the kernel has the fsync= option (6.x)
      expect(superOptions!.split(',').some((o) => o === 'volatile' || o === 'fsync=volatile'), line).toBe(true);
    } finally {
      await sb.close();
    }
  });

  it('a run that committed a write syncs the file system of that root, once; a run that wrote nothing syncs nothing', async () => {
    const sb = s.sandbox({ sync: wrapper });
    try {
      const before = calls().length;
      const quiet = await sb.run(req(s, ['true']));
      expect(quiet.exitCode).toBe(0);
      expect(calls().length).toBe(before);
      const wrote = await sb.run(req(s, ['sh', '-c', 'echo kept > src/synced.txt']));
      expect(wrote.exitCode).toBe(0);
      expect(wrote.stderr).not.toContain('not synced');
      expect(readFileSync(join(s.ws, 'src/synced.txt'), 'utf8')).toBe('kept\n');
      // the result came after the sync: its call is already in the log
      expect(calls().slice(before)).toEqual([`--file-system -- ${s.ws}`]);
    } finally {
      await sb.close();
    }
  });

  it('a sync that fails is said on stderr, naming the root; what was committed stays', async () => {
    const sb = s.sandbox({ sync: failing });
    try {
      const r = await sb.run(req(s, ['sh', '-c', 'echo still > src/unsynced.txt']));
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toContain(`aalis: the writes committed under ${s.ws} (sync: cannot sync here) were not synced to the disk`);
      expect(readFileSync(join(s.ws, 'src/unsynced.txt'), 'utf8')).toBe('still\n');
    } finally {
      await sb.close();
    }
  });
});

describe('syncFileSystems and rootsReceiving', () => {
  it('syncs each file system once, skips a root that is gone, and says when sync is missing', async () => {
    const a = join(s.root, 'fs-a');
    const b = join(s.root, 'fs-b');
    mkdirSync(a);
    mkdirSync(b);
    const before = calls().length;
    expect(await syncFileSystems([a, b, join(s.root, 'gone')], wrapper)).toBe('');
    expect(calls().slice(before)).toEqual([`--file-system -- ${a}`]); // a and b: one device
    expect(await syncFileSystems([a], undefined)).toContain(`under ${a} (coreutils sync is not installed)`);
    expect(await syncFileSystems([join(s.root, 'gone')], undefined)).toBe('');
  });

  it('names the writable roots that received a commit, by path components', () => {
    expect(rootsReceiving(['/w/ws', '/w/ws2', '/t'], ['/w/ws2/a', '/w/ws2/b/c'])).toEqual(['/w/ws2']);
    expect(rootsReceiving(['/w/ws', '/t'], [])).toEqual([]);
  });
});

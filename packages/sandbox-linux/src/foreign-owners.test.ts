import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * What a command run by root sees of host files whose owner is neither root nor mapped (issue 13):
 * bubblewrap 0.8 maps only its own id in the namespace it nests, so such an owner shows as the
 * overflow id 65534, and root inside holds no capability over the inode: the command gets the
 * file's "other" permission bits and nothing more, as an unprivileged stranger would.
 */

const OTHER = 1234;
let s: Scene;
beforeAll(() => {
  s = makeScene();
  const own = (p: string) => chownSync(p, OTHER, OTHER);
  // modes set by chmod: the umask would take the 0666's write bits
  writeFileSync(join(s.ws, 'theirs-0644'), 'readable\n', { mode: 0o644 });
  writeFileSync(join(s.ws, 'theirs-0600'), 'THEIR SECRET\n', { mode: 0o600 });
  writeFileSync(join(s.ws, 'theirs-0666'), 'shared\n', { mode: 0o666 });
  mkdirSync(join(s.ws, 'their-dir'), { mode: 0o755 });
  for (const [n, mode] of [['theirs-0644', 0o644], ['theirs-0600', 0o600], ['theirs-0666', 0o666], ['their-dir', 0o755]] as const) {
    own(join(s.ws, n));
    chmodSync(join(s.ws, n), mode);
  }
});
afterAll(() => s?.cleanup());

/** One shell step per line: its name, then `ok` or `no`. */
const steps = [
  ['owner', 'stat -c %u:%g theirs-0644'],
  ['read 0644', 'cat theirs-0644'],
  ['append 0644', 'echo more >> theirs-0644'],
  ['chmod 0644', 'chmod 666 theirs-0644'],
  ['chown 0644', 'chown 0:0 theirs-0644'],
  ['read 0600', 'cat theirs-0600'],
  ['append 0666', 'echo more >> theirs-0666'],
  ['create in 0755 dir', 'touch their-dir/new'],
] as const;
const script = steps.map(([name, cmd]) => `if { ${cmd}; } >/dev/null 2>&1; then echo "${name}: ok"; else echo "${name}: no"; fi`).join('\n');

describe.skipIf(process.getuid?.() !== 0)('host files of another owner, run by root', () => {
  it.each(['overlay', 'look'] as const)('show as 65534 and give the command only their "other" bits (%s model)', async (hostModel) => {
    const sb = createLinuxSandbox({ hostModel, landingSweepMs: 0 });
    const r = await sb.run(req(s, ['sh', '-c', `stat -c %u:%g theirs-0644; ${script}`]));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        '65534:65534',
        'owner: ok',
        'read 0644: ok',
        'append 0644: no',
        'chmod 0644: no',
        'chown 0644: no',
        'read 0600: no',
        'append 0666: ok',
        'create in 0755 dir: no',
        '',
      ].join('\n'),
    );
    // on the host: the 0644 and 0600 files untouched, the 0666 one appended (committed, mode kept), owners kept
    expect(readFileSync(join(s.ws, 'theirs-0666'), 'utf8')).toMatch(/^shared\n(more\n)+$/);
    expect(statSync(join(s.ws, 'theirs-0666')).mode & 0o7777).toBe(0o666);
    expect(readFileSync(join(s.ws, 'theirs-0644'), 'utf8')).toBe('readable\n');
    expect(statSync(join(s.ws, 'theirs-0644')).mode & 0o7777).toBe(0o644);
    for (const n of ['theirs-0644', 'theirs-0600', 'theirs-0666', 'their-dir']) expect([n, statSync(join(s.ws, n)).uid]).toEqual([n, OTHER]);
  });
});

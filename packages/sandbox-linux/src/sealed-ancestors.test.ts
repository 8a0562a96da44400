import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapePattern, type SandboxPolicy } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanHost } from './scan.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * The daemon's data directory holds the workspace and every conversation's session temp (its
 * `tmp`), and is hidden but for what is mounted back. The scan lists each ancestor of a root for
 * `.env` files and other matches; those inside such a hidden directory are under its mount, and
 * were listed all the same: with one session temp per conversation, 100,000 conversations made
 * every run list, match, send and translate 100,000 entries (725 ms a run_command against 26).
 * The scene has the same shape: `data/tmp` hidden by a `{ path }` rule, `data/tmp/session-1` the
 * session temp; the daemon's own rule for its data directory, a pattern over all of it, is added.
 * Such an ancestor is still listed for its symlinks (sealed-ancestor-*.test.ts: a matching one hides its
 * target, which may lie outside).
 */
let s: Scene;
const OTHERS = 200;
beforeAll(() => {
  s = makeScene();
  for (let i = 0; i < OTHERS; i++) {
    mkdirSync(join(s.data, 'tmp', `session-other-${i}`));
    writeFileSync(join(s.data, 'tmp', `session-other-${i}`, 'secret.txt'), `secret ${i}\n`);
  }
  writeFileSync(join(s.data, 'tmp', '.env'), 'TOKEN=1\n');
});
afterAll(() => s.cleanup());

function daemonLike(extra: Partial<SandboxPolicy> = {}): SandboxPolicy {
  const base = workspacePolicy(s);
  return { ...base, readDeny: [...base.readDeny, { pattern: `^${escapePattern(s.data)}(?:/.*)?$`, except: [{ path: s.data }] }], ...extra };
}

const underTmp = (paths: readonly string[]) => paths.filter((p) => p.startsWith(`${join(s.data, 'tmp')}/`) && !p.startsWith(`${s.sessionTmp}`));

describe('ancestors inside a directory a { path } rule hides', () => {
  it('are listed for their symlinks alone: nothing else in them is found, however many entries they hold', () => {
    const facts = scanHost(daemonLike(), s.ws, { home: s.home, noCache: true });
    expect(underTmp(facts.found.map((f) => f.path))).toEqual([]);
    expect(underTmp(facts.matched ?? [])).toEqual([]);
  });

  it('are listed when the rule puts back entries by a pattern, which only a listing finds', () => {
    const base = daemonLike();
    const readDeny = base.readDeny.map((r) => ('path' in r && r.path === join(s.data, 'tmp') ? { ...r, except: [{ pattern: `^${escapePattern(join(s.data, 'tmp'))}/session-other-1$` }] } : r));
    const facts = scanHost({ ...base, readDeny }, s.ws, { home: s.home, noCache: true });
    expect(underTmp(facts.found.map((f) => f.path)).length).toBeGreaterThan(0);
  });

  it('stay hidden in the sandbox: the other sessions are not there, the own one is', async () => {
    const sb = createLinuxSandbox({ hostModel: 'overlay' });
    try {
      const tmp = join(s.data, 'tmp');
      const r = await sb.run(req(s, ['sh', '-c', `ls -a ${tmp}; cat ${tmp}/session-other-0/secret.txt ${tmp}/.env; echo x > ${s.sessionTmp}/mine && echo wrote`], { policy: daemonLike() }));
      expect(r.stdout).toBe('.\n..\nsession-1\nwrote\n');
      expect(r.stderr).toMatch(/session-other-0\/secret\.txt: No such file or directory/);
      expect(r.stderr).toMatch(/\.env: No such file or directory/);
    } finally {
      await sb.close();
    }
  });
});

// The host's file tools in the sandboxed tiers never make a folder git would take for a bare
// repository (HEAD, objects and refs beside each other): git reads such a folder's config and runs
// its hooks before it looks for a `.git` above, so a `docs/config` with core.pager ran at the
// person's next `git log` in docs/ (found by an attack on the sandbox's commit; the same seam here).
// A real kernel and real files; the entry that would complete the three is refused, however it is made.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { afterAll, describe, expect, it } from 'vitest';
import { bareDisguiseOf } from './landing-links.js';
import { installOf, startToolsKernel } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-bare-disguise-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function layout(name: string) {
  const base = join(root, name);
  const home = join(base, 'home');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  return { base, home, project, dataDir: join(base, 'data'), install: installOf(base) };
}

describe('the host file tools and the bare-repository disguise', { timeout: 60_000 }, () => {
  // two of the three made on the host (by the person, or a write the owner approved: HEAD is a
  // landing the reach asks for), the third by the tool
  it.each([
    ['objects, made on the way by write_file', ['HEAD', 'refs'], ['write_file', 'docs/objects/pack/x', '1'], 'docs/objects'],
    ['refs, by move_path', ['HEAD', 'objects'], ['move_path', 'r', 'docs/refs'], 'docs/refs'],
  ] as const)('%s: refused, and git there still finds the repository above', async (_what, host, [tool, a, b], made) => {
    const l = layout(`case-${Math.random().toString(36).slice(2)}`);
    mkdirSync(join(l.project, 'docs'));
    for (const h of host) if (h === 'HEAD') writeFileSync(join(l.project, 'docs', 'HEAD'), 'ref: refs/heads/main\n');
    else mkdirSync(join(l.project, 'docs', h, 'x'), { recursive: true });
    mkdirSync(join(l.project, 'r', 'heads'), { recursive: true });
    writeFileSync(join(l.project, 'docs', 'config'), '[core]\n\tpager = touch pwned\n');
    const env = await startToolsKernel({ ...l, tier: 'workspace' });
    try {
      const outcome = await env.call(tool, tool === 'move_path' ? { from: a, to: b } : { path: a, content: b });
      expect(outcome).toMatchObject({ ok: false, kind: 'denied', message: expect.stringContaining('git would take') });
      expect(existsSync(join(l.project, made))).toBe(false);
      expect(execFileSync('git', ['-C', join(l.project, 'docs'), 'rev-parse', '--absolute-git-dir'], { encoding: 'utf8' })).toBe(`${join(l.project, '.git')}\n`);
      // HEAD itself is a landing the reach asks for (rejected here), and refused by shape even where approved
      rmSync(join(l.project, 'docs', 'HEAD'));
      mkdirSync(join(l.project, 'docs', 'objects'), { recursive: true });
      mkdirSync(join(l.project, 'docs', 'refs'), { recursive: true });
      expect(await env.call('write_file', { path: 'docs/HEAD', content: 'ref: refs/heads/main\n' })).toMatchObject({ ok: false });
      expect(existsSync(join(l.project, 'docs', 'HEAD'))).toBe(false);
    } finally {
      await env.kernel.stop();
    }
  });

  it('names nothing for ordinary writes, or where one of the three is missing', () => {
    const l = layout('plain');
    mkdirSync(join(l.project, 'a', 'objects'), { recursive: true });
    expect(bareDisguiseOf(join(l.project, 'a', 'HEAD'))).toBeUndefined();
    expect(bareDisguiseOf(join(l.project, 'a', 'notes.txt'))).toBeUndefined();
    mkdirSync(join(l.project, 'a', 'refs'));
    expect(bareDisguiseOf(join(l.project, 'a', 'HEAD'))).toBe(join(l.project, 'a'));
    expect(bareDisguiseOf(join(l.project, 'b', 'HEAD'))).toBeUndefined();
  });
});

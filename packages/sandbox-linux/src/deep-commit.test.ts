import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OverlayScene, overlayScene, req, until, workspacePolicy } from './scene.testing.js';

/*
 * The commit's walks are iterative with a fixed number of open descriptors (dir-cursor.ts): a
 * tree 7,000 levels deep written by a real sandboxed command is committed, and a landing at its
 * bottom refused (issue 13). Recursive walks stopped near 5,500 levels. 7,000, not more: each
 * path is judged whole, so the commit's cost grows with the square of the depth (20,000 levels
 * took 200 to 450 s on a loaded machine, 7,000 about an eighth of that).
 */

const DEPTH = 7_000;
let s: OverlayScene;
beforeAll(async () => {
  s = await overlayScene();
});
afterAll(() => s.cleanup());

/** Writes `d/d/…/d` (`depth` levels) with `file` at the bottom, relative all the way (no path is ever past PATH_MAX). */
const deepScript = (top: string, ...files: string[]) =>
  `perl -e 'mkdir "${top}" or die; chdir "${top}" or die; for (2..${DEPTH}) { mkdir "d" or die "mkdir: $!"; chdir "d" or die } for my $n (${files.map((f) => `"${f}"`).join(', ')}) { open my $f, ">", $n or die; print $f "bottom\\n"; close $f }'`;

/** What the host holds at the bottom of `top`: the depth (directories) and the bottom entries, walked by find (relative, any depth). */
function bottomOf(top: string): { depth: number; files: string[] } {
  const out = execFileSync('find', [top, '-type', 'f', '-printf', '%d %f\\n'], { maxBuffer: 1 << 26 }).toString().trim().split('\n').filter(Boolean);
  const dirs = Number(execFileSync('sh', ['-c', `find '${top}' -type d | wc -l`]).toString().trim());
  return { depth: dirs, files: out.map((l) => l.split(' ')[1]!).sort() };
}

describe('a tree deeper than any recursion', { timeout: 600_000 }, () => {
  it(`is committed from a real run (${DEPTH} levels), a landing at its bottom refused by its path, and the run folder goes`, async () => {
    const sb = s.sandbox();
    const r = await sb.run(req(s, ['sh', '-c', deepScript('deep', 'leaf.txt', 'lefthook.yml')], { policy: workspacePolicy(s), timeoutMs: 120_000 }));
    expect(r.exitCode, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stderr).not.toMatch(/could not be committed|Maximum call stack|EMFILE/);
    expect(bottomOf(join(s.ws, 'deep'))).toEqual({ depth: DEPTH, files: ['leaf.txt'] });
    expect(r.deniedWrites).toHaveLength(1);
    expect(r.deniedWrites[0]).toMatch(/\/d\/lefthook\.yml$/);
    expect(r.deniedWrites[0]!.split('/').length).toBe(join(s.ws, 'deep').split('/').length + DEPTH);
    await until(() => s.runFolders().length === 0, 'the run folder went after the run'); // its removal is not waited for by the result
  });
});

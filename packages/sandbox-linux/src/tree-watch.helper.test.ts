// The inotify helper's sweep of dead helpers' folders in the temp directory (tree-watch.helper.ts),
// run as the daemon runs it (python3, the helper's source): it takes only a folder of this user's.
// Found by an attack (h105): a local user's symlink /tmp/aalis-tree-watch-<dead pid>-x -> /root
// had a root daemon's helper remove /root/a and /root/b through it (where fs.protected_symlinks is 0).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TREE_WATCH_PY } from './tree-watch.helper.js';

let tmp: string;
let victim: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'aalis-twh-tmp-'));
  victim = mkdtempSync(join(tmpdir(), 'aalis-twh-victim-'));
});
afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
  rmSync(victim, { recursive: true, force: true });
});

/** Runs the helper with `tmp` as its temp directory and no input: it sweeps, then ends at EOF. */
function runHelper(): void {
  const run = spawnSync('python3', ['-c', TREE_WATCH_PY], { env: { ...process.env, TMPDIR: tmp }, input: '', timeout: 20_000 });
  expect(run.error).toBeUndefined();
}

describe('the tree-watch helper at its start', () => {
  it("sweeps a dead helper's folder of its own", () => {
    const dead = spawnSync('true').pid;
    const folder = join(tmp, `aalis-tree-watch-${dead}-abc123`);
    mkdirSync(folder);
    for (const f of ['a', 'b']) writeFileSync(join(folder, f), '');
    runHelper();
    expect(existsSync(folder)).toBe(false);
  });

  it('never follows a symlink of that name: what it points to keeps its a and b', () => {
    const dead = spawnSync('true').pid;
    for (const f of ['a', 'b']) writeFileSync(join(victim, f), 'keep');
    symlinkSync(victim, join(tmp, `aalis-tree-watch-${dead}-abc123`));
    runHelper();
    expect(existsSync(join(victim, 'a'))).toBe(true);
    expect(existsSync(join(victim, 'b'))).toBe(true);
  });
});

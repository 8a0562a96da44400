import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mainDirLandings, reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * `git worktree add` in the sandbox (new-worktree.ts): a linked worktree of the workspace's
 * repository lands when it is git's shape and nothing more; anything that would make it run
 * something of its own keeps it the landing it was. Real sandboxed commands with real git, the
 * reach's policy; before, every new worktree was refused and left as untracked files (h115 F1).
 */

const scenes: Scene[] = [];
afterAll(() => execFileSync('rm', ['-rf', ...scenes.map((s) => s.root)]));

const G = 'git -c user.name=a -c user.email=a@b -c commit.gpgsign=false';
const env = (s: Scene) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, GIT_CONFIG_NOSYSTEM: '1' });

/** A workspace repository with one commit, and `script` run in it under the reach's policy. */
async function runInRepo(script: string) {
  const s = makeScene();
  scenes.push(s);
  execFileSync('sh', ['-c', `${G} commit -q --allow-empty -m one`], { cwd: s.ws, env: env(s) });
  const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
  try {
    const r = await sb.run(req(s, ['sh', '-c', script], { policy: reachPolicyOf(s, { extraLandings: mainDirLandings(s.ws, s.home) }), timeoutMs: 60_000 }));
    return { s, r };
  } finally {
    await sb.close();
  }
}

describe('a new linked worktree of the workspace repository', { timeout: 120_000 }, () => {
  it('git worktree add and a commit in it land, and git on the host uses the worktree', async () => {
    const { s, r } = await runInRepo(`${G} worktree add -q wt -b feat && echo x > wt/x.txt && ${G} -C wt add x.txt && ${G} -C wt commit -qm two`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.writeDenied, r.stderr).toBe(false);
    const git = (...args: string[]) => execFileSync('git', ['-C', join(s.ws, 'wt'), ...args], { encoding: 'utf8', env: env(s) });
    expect(git('log', '--format=%s')).toBe('two\none\n');
    expect(git('rev-parse', '--git-common-dir')).toBe(`${join(s.ws, '.git')}\n`);
    expect(execFileSync('git', ['-C', s.ws, 'worktree', 'list', '--porcelain'], { encoding: 'utf8', env: env(s) })).toContain(`worktree ${join(s.ws, 'wt')}\n`);
  });

  it.each([
    ['its own config (config.worktree)', `printf '[core]\\n\\thooksPath = /tmp/evil\\n' > .git/worktrees/wt/config.worktree`],
    ['a hooks folder of its own', 'mkdir .git/worktrees/wt/hooks && echo x > .git/worktrees/wt/hooks/pre-commit'],
    ['a commondir naming another git folder', `${G} init -q --bare other.git && echo "$PWD/other.git" > .git/worktrees/wt/commondir`],
    ['objects of its own (a repository inside)', 'mkdir .git/worktrees/wt/objects'],
    ['a symlink inside', 'ln -s /etc .git/worktrees/wt/logs/etc'],
    ['a .git file naming another worktree folder', 'echo "gitdir: $PWD/.git/worktrees/other" > wt/.git'],
    ['its gitdir naming a folder of its own choosing', 'echo "$PWD/elsewhere/.git" > .git/worktrees/wt/gitdir'],
    ['a rebase in progress', 'mkdir .git/worktrees/wt/rebase-merge && echo "exec touch /tmp/pwned" > .git/worktrees/wt/rebase-merge/git-rebase-todo'],
  ])('with %s stays a landing: its git folder does not land', async (_what, extra) => {
    const { s, r } = await runInRepo(`${G} worktree add -q wt -b feat && ${extra}; echo kept > note.txt`);
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(r.stderr).toContain('the new git worktree the command made was not committed (rule: landing)');
    expect(existsSync(join(s.ws, '.git', 'worktrees', 'wt'))).toBe(false);
    expect(existsSync(join(s.ws, 'wt', '.git'))).toBe(false);
    expect(readFileSync(join(s.ws, 'note.txt'), 'utf8')).toBe('kept\n');
  });

  it("a worktree added in the same run does not open the main repository's hooks or config", async () => {
    const { s, r } = await runInRepo(`${G} worktree add -q wt -b feat; echo '#!/bin/sh' > .git/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config`);
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(s.ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(s.ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
    expect(existsSync(join(s.ws, '.git', 'worktrees', 'wt', 'HEAD'))).toBe(true);
  });

  it("an existing worktree's own config stays a landing", async () => {
    const s0 = makeScene();
    scenes.push(s0);
    execFileSync('sh', ['-c', `${G} commit -q --allow-empty -m one && ${G} worktree add -q wt -b feat`], { cwd: s0.ws, env: env(s0) });
    const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s0.root, 'undone') });
    try {
      const r = await sb.run(req(s0, ['sh', '-c', `printf '[core]\\n\\thooksPath = /tmp/evil\\n' > .git/worktrees/wt/config.worktree; echo '/elsewhere' > .git/worktrees/wt/commondir`], { policy: reachPolicyOf(s0, { extraLandings: mainDirLandings(s0.ws, s0.home) }), timeoutMs: 60_000 }));
      expect(r.writeDenied, r.stderr).toBe(true);
    } finally {
      await sb.close();
    }
    expect(existsSync(join(s0.ws, '.git', 'worktrees', 'wt', 'config.worktree'))).toBe(false);
    expect(readFileSync(join(s0.ws, '.git', 'worktrees', 'wt', 'commondir'), 'utf8')).toBe('../..\n');
  });
});

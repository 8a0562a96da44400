import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitDirLandings } from '@aalis/api-reach';
import { gitConfigNotInert } from '@aalis/core';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * A repository a command makes (`git init`, `git clone`) is committed when it runs nothing of its
 * own: hooks that are git's samples only, a config of the keys git writes. Before, every entry of
 * a new `.git` was refused, and a project a command scaffolded came out without its repository.
 * Real sandboxed commands, the overlay model; real git inside.
 */

let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const sandbox = () => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
const run = (dir: string, script: string, policy = workspacePolicy(s)) => sandbox().run(req(s, ['sh', '-c', script], { policy, cwd: dir }));
/** The scene's policy with the landing the reach adds for every git directory: a `HEAD` outside `.git` (api-reach `gitDirLandings`). */
const reachLike = () => {
  const p = workspacePolicy(s);
  return { ...p, writeDeny: [...p.writeDeny, ...gitDirLandings([])] };
};
const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
const fresh = (name: string) => {
  const dir = join(s.ws, name);
  mkdirSync(dir);
  return dir;
};

describe('a new repository the command made', { timeout: 120_000 }, () => {
  it('git init, a commit and a clone land whole, and git on the host reads them', async () => {
    const d = fresh('made');
    const r = await run(d, 'git init -q x && echo hi > x/a && git -C x add a && git -C x -c user.email=a@b -c user.name=a commit -qm first && git clone -q x y');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.writeDenied, r.stderr).toBeFalsy();
    expect(git(join(d, 'x'), 'log', '--format=%s')).toBe('first\n');
    expect(git(join(d, 'y'), 'log', '--format=%s')).toBe('first\n');
    expect(git(join(d, 'y'), 'config', 'remote.origin.url')).toBe(`${join(d, 'x')}\n`);
    expect(readdirSync(join(d, 'x', '.git', 'hooks')).every((n) => n.endsWith('.sample'))).toBe(true);
  });

  // `git init --bare` and `git clone --bare` (a local remote): before, their HEAD alone was refused
  // (the reach makes a HEAD outside .git a landing: the bare-repository disguise), so the folder
  // landed as no repository at all
  it('git init --bare and git clone --bare land whole, and git on the host pushes to them', async () => {
    const d = fresh('bare');
    const r = await run(d, 'git init -q --bare remote.git && git init -q w && echo hi > w/a && git -C w add a && git -C w -c user.email=a@b -c user.name=a commit -qm first && git clone -q --bare w copy.git', reachLike());
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.writeDenied, r.stderr).toBeFalsy();
    expect(git(join(d, 'remote.git'), 'rev-parse', '--is-bare-repository')).toBe('true\n');
    expect(git(join(d, 'copy.git'), 'log', '--format=%s')).toBe('first\n');
    execFileSync('git', ['-C', join(d, 'w'), 'push', '-q', join(d, 'remote.git'), 'HEAD:refs/heads/main'], { stdio: 'ignore' });
    expect(git(join(d, 'remote.git'), 'log', '--format=%s', 'main')).toBe('first\n');
  });

  // a HEAD, objects/ and a config written into a folder (new or the host's) make git take it for a
  // repository before the .git above, and the person's next `git log` there on a terminal ran the
  // config's pager: the reach's HEAD landing refuses it, and a policy without that landing (as this
  // scene's, by hand) let all of it land before; refused by its shape now, whatever the policy
  it.each([
    ['a new folder', 'mkdir -p docs'],
    ['a folder the host had', 'true'],
    ['a folder deep in a new tree', 'mkdir -p t/u/docs && cd t/u'],
  ])('in %s, a HEAD beside objects/ and a config that runs a program is refused', async (_what, before) => {
    const d = fresh(`disguise-${Math.random().toString(36).slice(2)}`);
    mkdirSync(join(d, 'docs'));
    execFileSync('git', ['init', '-q', d]);
    const r = await run(d, `${before} && mkdir -p docs/objects docs/refs/heads && echo "ref: refs/heads/main" > docs/HEAD && printf "[core]\\n\\tpager = touch pwned\\n" > docs/config && echo kept > note.txt`);
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(r.stderr).toContain('git would take');
    const top = before.startsWith('mkdir -p t') ? join(d, 't', 'u') : d;
    expect(existsSync(join(top, 'docs', 'HEAD'))).toBe(false);
    expect(readFileSync(join(top, 'note.txt'), 'utf8')).toBe('kept\n');
    // git there finds the repository above, and runs nothing of the command's: `git log` on a
    // terminal (script(1) gives it one) ran the config's pager where the folder was taken for a repository
    expect(git(join(top, 'docs'), 'rev-parse', '--absolute-git-dir')).toBe(`${join(d, '.git')}\n`);
    execFileSync('script', ['-qc', 'git log -1', '/dev/null'], { cwd: join(top, 'docs'), stdio: 'ignore', env: { ...process.env, HOME: s.home } });
    expect(existsSync(join(top, 'docs', 'pwned'))).toBe(false);
  });

  // over several runs, each adding one of the three (HEAD, objects/, refs/): the one that completes them is refused
  it('over three runs, the entry that would complete HEAD, objects and refs is refused, in whatever order', async () => {
    for (const order of [['HEAD', 'objects', 'refs'], ['objects', 'refs', 'HEAD'], ['refs', 'HEAD', 'objects']]) {
      const d = fresh(`steps-${order.join('-')}`);
      execFileSync('git', ['init', '-q', d]);
      const make = (n: string) => (n === 'HEAD' ? 'echo "ref: refs/heads/main" > docs/HEAD' : `mkdir -p docs/${n}/x && echo 1 > docs/${n}/x/f`);
      const first = await run(d, `mkdir -p docs && printf "[core]\\n\\tpager = touch pwned\\n" > docs/config && ${make(order[0]!)}`);
      expect(first.writeDenied, first.stderr).toBeFalsy();
      expect((await run(d, make(order[1]!))).writeDenied).toBeFalsy();
      const last = await run(d, make(order[2]!));
      expect(last.writeDenied, last.stderr).toBe(true);
      expect(last.stderr).toContain('git would take');
      expect(existsSync(join(d, 'docs', order[2]!))).toBe(false);
      expect(git(join(d, 'docs'), 'rev-parse', '--absolute-git-dir')).toBe(`${join(d, '.git')}\n`);
    }
  });

  it('a bare one with a hook of its own leaves its HEAD out, so the host never takes it for a repository; the reason said', async () => {
    const d = fresh('bare-hook');
    const r = await run(d, 'git init -q --bare r.git && printf "#!/bin/sh\\ntouch pwned\\n" > r.git/hooks/post-receive && chmod +x r.git/hooks/post-receive && echo kept > note.txt', reachLike());
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(r.stderr).toContain('the new bare git repository the command made was not committed as a repository (rule: landing)');
    expect(r.stderr).toContain('hooks/post-receive is a hook git would run');
    expect(existsSync(join(d, 'r.git', 'HEAD'))).toBe(false);
    expect(readFileSync(join(d, 'note.txt'), 'utf8')).toBe('kept\n');
  });

  // each is refused whole and said, and the rest of the run lands
  it.each([
    ['a hook', 'git init -q r && printf "#!/bin/sh\\necho pwned\\n" > r/.git/hooks/pre-commit && chmod +x r/.git/hooks/pre-commit', 'hooks/pre-commit is a hook git would run'],
    ['a config key that runs a program', 'git init -q r && git -C r config core.fsmonitor "echo pwned"', 'sets core.fsmonitor'],
    ['a remote reached by running a program', 'git init -q r && git -C r remote add origin "ext::sh -c echo"', 'git would reach by running a program'],
    ['a value git would read past a quote', 'git init -q r && printf "[user]\\n\\tname = \\"a\\nb\\"\\n" >> r/.git/config', 'is not the plain'],
    ['a symlink inside', 'git init -q r && ln -s /etc r/.git/objects/etc', 'objects/etc is a symlink'],
    ['a rebase in progress', 'git init -q r && mkdir r/.git/rebase-merge && echo "exec touch /tmp/pwned" > r/.git/rebase-merge/git-rebase-todo', 'a rebase or cherry-pick in progress'],
    ['a commondir', 'git init -q r && echo /elsewhere > r/.git/commondir', 'points git at other git folders'],
    // a tree the commit moves by one rename keeps its hard links: the config would change through data.txt later
    ['a config with another name', 'git init -q r && ln r/.git/config data.txt', 'its config has other hard links'],
    ['a remote in the older form', 'git init -q r && echo "ext::sh -c echo" > r/.git/branches/origin', "names a remote in git's older form"],
    ['a repository disguised inside it', 'git init -q r && git init -q --bare r/.git/refs/remotes/x', 'take it for a repository of its own'],
    // h106: .git/x (HEAD, commondir -> a bare repository of the command's, whose HEAD alone is a landing) as the remote: `git push` ran its pre-receive
    ['a worktree-like git folder inside it (HEAD and a commondir)', 'git init -q r && git init -q --bare c && mkdir r/.git/x && echo "ref: refs/heads/main" > r/.git/x/HEAD && echo "$PWD/c" > r/.git/x/commondir && git -C r remote add origin "$PWD/r/.git/x"', 'r/.git: the new git repository the command made was not committed (rule: landing): it has x, which is no name git keeps in a git folder'],
  ])('with %s stays a landing: refused, and the reason said', async (_what, script, why) => {
    const d = fresh(`bad-${Math.random().toString(36).slice(2)}`);
    const r = await run(d, `${script} && echo kept > note.txt`);
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(r.stderr).toContain(why);
    expect(existsSync(join(d, 'r', '.git'))).toBe(false);
    expect(readFileSync(join(d, 'note.txt'), 'utf8')).toBe('kept\n');
  });

  it("an existing repository's hooks and config stay landings: a sample written there is refused", async () => {
    const d = fresh('existing');
    git(d, 'init', '-q');
    const config = readFileSync(join(d, '.git', 'config'), 'utf8');
    const r = await run(d, 'git config user.name agent; echo "# more" >> .git/hooks/pre-push.sample');
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(readFileSync(join(d, '.git', 'config'), 'utf8')).toBe(config);
  });

  // h106: a command's .git/rebase-merge with an `exec` line in an existing repository: git status
  // said to run `git rebase --continue`, which ran it on the host
  it("an existing repository's rebase state is a landing: a planted todo is refused", async () => {
    const d = fresh('existing-rebase');
    git(d, 'init', '-q');
    const r = await run(d, 'mkdir .git/rebase-merge && echo "exec touch /tmp/pwned" > .git/rebase-merge/git-rebase-todo && touch .git/rebase-merge/interactive');
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(d, '.git', 'rebase-merge'))).toBe(false);
  });

  it('inside a landing folder, a new repository is no exception: .husky/r/.git is refused', async () => {
    const d = fresh('in-landing');
    const r = await run(d, 'git init -q .husky/r');
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(d, '.husky'))).toBe(false);
  });
});

describe('gitConfigNotInert', () => {
  const plain = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote "origin"]\n\turl = https://example.invalid/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n';
  it.each([
    ['what git init and clone write', plain, undefined],
    ['a comment line', `# made by git\n${plain}`, undefined],
    ['an alias', `${plain}[alias]\n\tst = !sh -c x\n`, 'sets alias.st'],
    ['an include', `${plain}[include]\n\tpath = ../x\n`, 'sets include.path'],
    ['the old dotted section', '[remote.origin]\n\turl = x\n', 'is not the plain'],
    ['a continued line', '[core]\n\tbare = fal\\\nse\n', 'is not the plain'],
    ['a comment after a value', '[core]\n\tbare = false ; x\n', 'is not the plain'],
    ['a key before any section', 'bare = false\n', 'before any section'],
    ['a bare key (true by its name)', '[core]\n\tfsmonitor\n', 'is not the plain'],
    ['a remote helper transport', '[remote "o"]\n\turl = ext::sh -c x\n', 'running a program'],
    ['a branch whose remote is an address', '[branch "main"]\n\tremote = ext::sh -c x\n', 'running a program'],
    ['a uploadpack', '[remote "o"]\n\tuploadpack = touch x\n', 'sets remote."o".uploadpack'],
    ['upper-case names, folded as git folds them', '[CORE]\n\tFsMonitor = x\n', 'sets core.fsmonitor'],
  ])('%s', (_what, text, why) => {
    const got = gitConfigNotInert(Buffer.from(text));
    if (why === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(why);
  });
  it('bytes that are not UTF-8 are no config read here', () => {
    expect(gitConfigNotInert(Buffer.from([0x5b, 0xff, 0x5d]))).toContain('not UTF-8');
  });
});

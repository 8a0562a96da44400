import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitDirLandings } from '@aalis/api-reach';
import { linkChainOf } from '@aalis/core';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * A landing that is a symlink is protected along the whole way it resolves (found by an attack,
 * h101): a command that replaced a symlink or a directory the landing resolves through, then
 * wrote the file it now leads to, had its hook committed and run by the next host `git commit`.
 * Real sandboxed commands, the overlay model; the hook is never changed.
 */

let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const sandbox = () => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });
const HOOK = '#!/bin/sh\nexit 0\n';

describe('linkChainOf', () => {
  it('names every directory and symlink a link resolves through, and where it ends, there or not', () => {
    const d = join(s.root, 'chain');
    mkdirSync(join(d, 'tools', 'v2'), { recursive: true });
    writeFileSync(join(d, 'tools', 'v2', 'f'), 'x');
    symlinkSync('v2', join(d, 'tools', 'current'));
    symlinkSync('tools/current/f', join(d, 'link'));
    symlinkSync('tools/missing/g', join(d, 'dangling'));
    expect(linkChainOf(join(d, 'link'))).toEqual({ through: [join(d, 'tools'), join(d, 'tools', 'current'), join(d, 'tools', 'v2')], target: join(d, 'tools', 'v2', 'f') });
    // the first missing name is on the way too: made a symlink, it would send the rest elsewhere
    expect(linkChainOf(join(d, 'dangling'))).toEqual({ through: [join(d, 'tools'), join(d, 'tools', 'missing')], target: join(d, 'tools', 'missing', 'g') });
    // `..` from where the kernel is, not collapsed as text (found by an attack): current/.. is tools/v2/.., that is tools
    symlinkSync('tools/current/../x', join(d, 'up'));
    expect(linkChainOf(join(d, 'up')).target).toBe(join(d, 'tools', 'x'));
    mkdirSync(join(d, 'deep', 'dir'), { recursive: true });
    symlinkSync('deep/dir', join(d, 'lnk'));
    symlinkSync('lnk/../hook.sh', join(d, 'hook'));
    expect(linkChainOf(join(d, 'hook')).target).toBe(join(d, 'deep', 'hook.sh'));
    symlinkSync('loop-b', join(d, 'loop-a'));
    symlinkSync('loop-a', join(d, 'loop-b'));
    expect(linkChainOf(join(d, 'loop-a')).target).toBeUndefined();
  });
});

describe('a landing symlink is protected along the way it resolves', { timeout: 120_000 }, () => {
  it('a hook behind a symlinked directory: replacing that directory and writing the hook there is refused', async () => {
    mkdirSync(join(s.ws, 'tools', 'scripts'), { recursive: true });
    writeFileSync(join(s.ws, 'tools', 'scripts', 'pre-commit.sh'), HOOK);
    symlinkSync('tools/scripts', join(s.ws, 'scripts'));
    mkdirSync(join(s.ws, '.git', 'hooks'), { recursive: true });
    symlinkSync('../../scripts/pre-commit.sh', join(s.ws, '.git', 'hooks', 'pre-commit'));
    const r = await sandbox().run(req(s, ['sh', '-c', 'rm scripts && mkdir scripts && printf "#!/bin/sh\\necho pwned\\n" > scripts/pre-commit.sh && echo fine > other.txt'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(readlinkSync(join(s.ws, 'scripts'))).toBe('tools/scripts');
    expect(readFileSync(join(s.ws, '.git', 'hooks', 'pre-commit'), 'utf8')).toBe(HOOK);
    expect(readFileSync(join(s.ws, 'other.txt'), 'utf8')).toBe('fine\n'); // the rest of the run commits
    // an ordinary file beside the hook, through the same link, still commits
    const ok = await sandbox().run(req(s, ['sh', '-c', 'echo lint > scripts/lint.sh'], { policy: workspacePolicy(s) }));
    expect(ok.writeDenied, ok.stderr).toBeFalsy();
    expect(readFileSync(join(s.ws, 'tools', 'scripts', 'lint.sh'), 'utf8')).toBe('lint\n');
  });

  // held before too: the target's read-only mount keeps the directory holding it from being moved
  it('a directory on the way replaced by a symlink to a tree the command made is refused', async () => {
    mkdirSync(join(s.ws, 'hooksrc'));
    writeFileSync(join(s.ws, 'hooksrc', 'post-checkout.sh'), HOOK);
    symlinkSync('../../hooksrc/post-checkout.sh', join(s.ws, '.git', 'hooks', 'post-checkout'));
    const r = await sandbox().run(req(s, ['sh', '-c', 'mv hooksrc hooksrc-old && mkdir evil && printf "echo pwned\\n" > evil/post-checkout.sh && ln -s evil hooksrc'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(lstatSync(join(s.ws, 'hooksrc')).isDirectory()).toBe(true);
    expect(readFileSync(join(s.ws, '.git', 'hooks', 'post-checkout'), 'utf8')).toBe(HOOK);
  });

  it('a landing link whose target is missing, at any depth: making the target, or the missing folder on its way, is refused', async () => {
    mkdirSync(join(s.ws, 'docs'));
    symlinkSync('docs/agent.md', join(s.ws, 'CLAUDE.md'));
    symlinkSync('../../tools/missing-hook.sh', join(s.ws, '.git', 'hooks', 'pre-push'));
    // deeper than the landing names looked for by the cwd (found by an attack: only the scan sees it)
    mkdirSync(join(s.ws, 'sub'));
    symlinkSync('notes/agent.md', join(s.ws, 'sub', 'CLAUDE.md'));
    const r = await sandbox().run(
      req(s, ['sh', '-c', 'echo "obey me" > docs/agent.md && echo "echo pwned" > tools/missing-hook.sh && mkdir sub/notes && echo "obey" > sub/notes/agent.md && echo fine > docs/readme.md'], { policy: workspacePolicy(s) }),
    );
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(s.ws, 'docs', 'agent.md'))).toBe(false);
    expect(existsSync(join(s.ws, 'tools', 'missing-hook.sh'))).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'notes'))).toBe(false);
    expect(readFileSync(join(s.ws, 'docs', 'readme.md'), 'utf8')).toBe('fine\n');
  });

  it('a hook link through `..` after a symlink, and a hooks folder that is itself a link: each way is protected as the kernel walks it', async () => {
    const w = join(s.ws, 'w2');
    mkdirSync(join(w, 'deep', 'dir'), { recursive: true });
    execFileSync('git', ['init', '-q', w]);
    symlinkSync('deep/dir', join(w, 'lnk'));
    writeFileSync(join(w, 'deep', 'hook.sh'), HOOK);
    symlinkSync('../../lnk/../hook.sh', join(w, '.git', 'hooks', 'pre-commit'));
    // .git/hooks of another repository is a link to a folder whose hook links onward
    const v = join(s.ws, 'w3');
    mkdirSync(join(v, 'githooks'), { recursive: true });
    execFileSync('git', ['init', '-q', v]);
    rmSync(join(v, '.git', 'hooks'), { recursive: true });
    symlinkSync('../githooks', join(v, '.git', 'hooks'));
    symlinkSync('../scripts/pc.sh', join(v, 'githooks', 'pre-commit'));
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo "echo pwned" > w2/deep/hook.sh; mkdir -p w3/scripts && echo "echo pwned" > w3/scripts/pc.sh'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(readFileSync(join(w, 'deep', 'hook.sh'), 'utf8')).toBe(HOOK);
    expect(existsSync(join(v, 'scripts', 'pc.sh'))).toBe(false);
  });

  it('a landing link that loops, and a .git file that names nothing, fail no commit: the rest of the run lands', async () => {
    const w = join(s.ws, 'w4');
    mkdirSync(w);
    symlinkSync('AGENTS.md', join(w, 'AGENTS.md')); // a loop of one
    writeFileSync(join(w, '.git'), 'not a gitdir line\n');
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo fine > notes.txt'], { policy: workspacePolicy(s), cwd: w }));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(w, 'notes.txt'), 'utf8')).toBe('fine\n');
  });

  it("a shell's start-up file kept in a dotfiles tree, behind a `current` link: moving the link is refused", async () => {
    const dot = join(s.ws, 'dotfiles');
    mkdirSync(join(dot, 'v2'), { recursive: true });
    writeFileSync(join(dot, 'v2', 'bashrc'), '# rc\n');
    symlinkSync('v2', join(dot, 'current'));
    rmSync(join(s.home, '.bashrc'));
    symlinkSync(join(dot, 'current', 'bashrc'), join(s.home, '.bashrc'));
    const r = await sandbox().run(req(s, ['sh', '-c', 'rm dotfiles/current && mkdir dotfiles/current && echo "echo pwned" > dotfiles/current/bashrc'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(readlinkSync(join(dot, 'current'))).toBe('v2');
    expect(readFileSync(join(s.home, '.bashrc'), 'utf8')).toBe('# rc\n');
  });

  // found by an attack (h101): only the workspace's own repository had its git directory and
  // hooksPath protected; a repository nested in it had only the `.git/…` name patterns
  it("a nested repository's git directory behind a .git file, and its core.hooksPath, take no command's hooks", async () => {
    const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, GIT_CONFIG_NOSYSTEM: '1' } });
    // the bare layout: projA/.bare is the repository, projA/.git a file pointing to it
    const a = join(s.ws, 'projA');
    mkdirSync(a);
    git(a, 'init', '-q', '--bare', '.bare');
    writeFileSync(join(a, '.git'), 'gitdir: ./.bare\n');
    // a nested repository of its own with core.hooksPath
    const b = join(s.ws, 'projB');
    mkdirSync(b);
    git(b, 'init', '-q');
    git(b, 'config', 'core.hooksPath', '.githooks');
    mkdirSync(join(b, '.githooks'));
    // one whose hooksPath goes up from a link: git looks in deep/hk, not hk (found by an attack)
    const c = join(s.ws, 'projC');
    mkdirSync(join(c, 'deep', 'dir'), { recursive: true });
    git(c, 'init', '-q');
    symlinkSync('deep/dir', join(c, 'lnk'));
    git(c, 'config', 'core.hooksPath', 'lnk/../hk');
    const r = await sandbox().run(
      req(s, ['sh', '-c', 'echo "echo pwned" > projA/.bare/hooks/pre-commit && printf "[core]\\n\\tfsmonitor = touch pwned\\n" >> projA/.bare/config && echo "echo pwned" > projB/.githooks/pre-commit && mkdir projC/deep/hk && echo "echo pwned" > projC/deep/hk/pre-commit && echo fine > projB/notes.txt'], { policy: workspacePolicy(s) }),
    );
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(a, '.bare', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(a, '.bare', 'config'), 'utf8')).not.toContain('fsmonitor');
    expect(existsSync(join(b, '.githooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(c, 'deep', 'hk'))).toBe(false);
    expect(readFileSync(join(b, 'notes.txt'), 'utf8')).toBe('fine\n');
  });

  // found by an attack (h104): the readers of a nested repository's `.git` take text paths, which
  // cannot name a folder whose name is not UTF-8; its config was never read, and its hooksPath
  // took a command's hook, which the next host `git commit` there ran
  it("a nested repository under a name that is not UTF-8 takes no command's hooks", async () => {
    const raw = Buffer.concat([Buffer.from(`${s.ws}/`), Buffer.from([0xff]), Buffer.from('/projE')]);
    mkdirSync(raw, { recursive: true });
    // the name's bytes reach git through the shell (an argument string would be UTF-8)
    const sh = (script: string) => execFileSync('sh', ['-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, GIT_CONFIG_NOSYSTEM: '1', WS: s.ws } });
    sh('cd "$WS/$(printf "\\377")/projE" && git init -q && git config core.hooksPath .githooks');
    const r = await sandbox().run(req(s, ['sh', '-c', 'd="$(printf "\\377")/projE"; mkdir "$d/.githooks"; echo "echo pwned" > "$d/.githooks/pre-commit"; echo fine > other-e.txt'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(Buffer.concat([raw, Buffer.from('/.githooks')]))).toBe(false);
    expect(readFileSync(join(s.ws, 'other-e.txt'), 'utf8')).toBe('fine\n');
  });

  // found by an attack (h104): a nested repository whose .git is a symlink to its git directory
  // was left to the landing links, which protect the link's way and the git directory, not the
  // folder its core.hooksPath names
  it("a nested repository whose .git is a symlink takes no command's hooks in its core.hooksPath", async () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, GIT_CONFIG_NOSYSTEM: '1' };
    const f = join(s.ws, 'projF');
    mkdirSync(join(s.ws, 'gits'));
    mkdirSync(f);
    execFileSync('git', ['init', '-q', '--bare', join(s.ws, 'gits', 'f.git')], { env });
    execFileSync('git', ['-C', join(s.ws, 'gits', 'f.git'), 'config', 'core.bare', 'false'], { env });
    symlinkSync('../gits/f.git', join(f, '.git'));
    execFileSync('git', ['-C', f, 'config', 'core.hooksPath', '.githooks'], { env });
    const r = await sandbox().run(req(s, ['sh', '-c', 'mkdir projF/.githooks; echo "echo pwned" > projF/.githooks/pre-commit; echo fine > projF/notes.txt'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(f, '.githooks'))).toBe(false);
    expect(readFileSync(join(f, 'notes.txt'), 'utf8')).toBe('fine\n');
  });

  // found by an attack (h108): a bare repository in the workspace (`remote.git`, a local remote
  // pushed to) is a git directory under no `.git` name: its hooks and config took a command's
  // pre-receive, which the host's next `git push` to it ran
  it("a bare repository in the workspace takes no command's hooks or config", async () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: s.home, GIT_CONFIG_NOSYSTEM: '1' };
    const g = join(s.ws, 'remoteG.git');
    execFileSync('git', ['init', '-q', '--bare', g], { env });
    const config = readFileSync(join(g, 'config'), 'utf8');
    const r = await sandbox().run(
      // the reach adds the bare-repository HEAD pattern to every policy (api-reach gitDirLandings)
      req(s, ['sh', '-c', 'echo "echo pwned" > remoteG.git/hooks/pre-receive; printf "[core]\\n\\thooksPath = /x\\n" >> remoteG.git/config; echo fine > remoteG.git/description'], { policy: workspacePolicy(s, { writeDeny: [...workspacePolicy(s).writeDeny, ...gitDirLandings([])] }) }),
    );
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(join(g, 'hooks', 'pre-receive'))).toBe(false);
    expect(readFileSync(join(g, 'config'), 'utf8')).toBe(config);
    expect(readFileSync(join(g, 'description'), 'utf8')).toBe('fine\n');
  });

  // a relative core.hooksPath of the global configuration (h104: a nested repository's
  // `.githooks/pre-commit` ran at the next host commit) is a pattern landing of the policy, made by
  // its builder: plugin-reach's hooksPathLandings (hooks-path.test.ts, a real sandbox run)
});

// h104: with the home writable, a missing `~/.npm` made a symlink to a tree of the command's put
// `~/.npm/_npx` (a landing: packages npx runs) wherever the link pointed; the link was judged by
// its own name, no landing. A symlink above a path the policy protects is a write to that path.
describe('a symlink made above a protected path', { timeout: 120_000 }, () => {
  it('is refused, said; a symlink above nothing protected, and a real folder there, commit', async () => {
    const base = join(s.ws, 'shadow');
    mkdirSync(base);
    const landing = join(base, 'cache', '_npx');
    const hidden = join(base, 'creds', 'secret');
    const policy = workspacePolicy(s, { writeDeny: [...workspacePolicy(s).writeDeny, { path: landing }], readDeny: [...workspacePolicy(s).readDeny, { path: hidden }] });
    const r = await sandbox().run(req(s, ['sh', '-c', 'mkdir -p mine/_npx/x && echo evil > mine/_npx/x/run.js && ln -s mine cache && ln -s mine creds && ln -s mine plain'], { policy, cwd: base }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(r.stderr).toContain(`it would send ${landing}`);
    expect(existsSync(join(base, 'cache'))).toBe(false);
    expect(existsSync(join(base, 'creds'))).toBe(false);
    expect(readlinkSync(join(base, 'plain'))).toBe('mine');
    // the same names as real folders are judged entry by entry, as before: the landing in one is refused, the rest lands
    const d = await sandbox().run(req(s, ['sh', '-c', 'mkdir -p cache/_npx creds && echo x > cache/_npx/run.js && echo ok > cache/readme && echo ok > creds/readme'], { policy, cwd: base }));
    expect(d.writeDenied, d.stderr).toBe(true);
    expect(existsSync(join(landing, 'run.js'))).toBe(false);
    expect(readFileSync(join(base, 'cache', 'readme'), 'utf8')).toBe('ok\n');
    expect(readFileSync(join(base, 'creds', 'readme'), 'utf8')).toBe('ok\n');
  });
});

// A nested repository's config that runs a program by path (h104: core.fsmonitor, filters,
// aliases): that program is its landing as the config is.
describe("a nested repository's programs", { timeout: 120_000 }, () => {
  it('a command that rewrites the fsmonitor its config names is refused; the rest lands', async () => {
    const d = join(s.ws, 'projF');
    mkdirSync(join(d, 'tools'), { recursive: true });
    execFileSync('git', ['init', '-q', d]);
    execFileSync('git', ['-C', d, 'config', 'core.fsmonitor', 'tools/fsmon.sh']);
    writeFileSync(join(d, 'tools', 'fsmon.sh'), HOOK);
    const r = await sandbox().run(req(s, ['sh', '-c', 'echo "echo pwned" >> projF/tools/fsmon.sh; echo fine > projF/notes.txt'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(readFileSync(join(d, 'tools', 'fsmon.sh'), 'utf8')).toBe(HOOK);
    expect(readFileSync(join(d, 'notes.txt'), 'utf8')).toBe('fine\n');
  });

  // found by an attack (h108): a program named by a key the list did not have (interactive.diffFilter,
  // pager.<cmd>), or as a script an interpreter runs (`python3 tools/strip.py`), was written unasked
  it('a program its config names by other keys, or as an interpreter\'s script, is refused', async () => {
    const d = join(s.ws, 'projP');
    mkdirSync(join(d, 'tools'), { recursive: true });
    execFileSync('git', ['init', '-q', d]);
    execFileSync('git', ['-C', d, 'config', 'interactive.diffFilter', 'tools/df.sh']);
    execFileSync('git', ['-C', d, 'config', 'pager.log', 'tools/pager.sh']);
    execFileSync('git', ['-C', d, 'config', 'filter.strip.clean', 'python3 tools/strip.py']);
    const r = await sandbox().run(req(s, ['sh', '-c', 'for f in df.sh pager.sh strip.py; do echo pwned > projP/tools/$f; done; echo fine > projP/notes.txt'], { policy: workspacePolicy(s) }));
    expect(r.writeDenied, r.stderr).toBe(true);
    for (const f of ['df.sh', 'pager.sh', 'strip.py']) expect(existsSync(join(d, 'tools', f)), f).toBe(false);
    expect(readFileSync(join(d, 'notes.txt'), 'utf8')).toBe('fine\n');
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import type { SandboxPolicy } from '@aalis/api-reach';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, describe, expect, it } from 'vitest';
import { reachPolicyWith } from './reach-policy.testing.js';

// h109: attacks on s52's XDG landings and the new-bare-repository admission, on the policy a real
// daemon builds and real sandboxed commands (the overlay commit).
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-h109-')));
const home = join(root, 'home');
const ws = join(home, 'proj');
mkdirSync(ws, { recursive: true });
mkdirSync(join(root, 'install'), { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const policyWith = (env: Record<string, string>) => reachPolicyWith({ root, home, ws, env });

const run = (policy: SandboxPolicy, script: string, cwd = ws) =>
  createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(root, 'undone') }).run({ argv: ['sh', '-c', script], cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C' }, policy, timeoutMs: 20_000 });

describe('h109', { timeout: 90_000 }, () => {
  // F1: a new inert bare repository lands whole (s52); in a later run the command writes a hook
  // into it: nothing names a bare repository's hooks or config (the git landings need a `.git`
  // segment), so it lands, and the person's next `git push` to that local remote runs it on the host.
  it('F1: a hook written into a bare repository a previous run made is refused', async () => {
    const d = join(ws, 'f1');
    mkdirSync(d);
    const policy = await policyWith({});
    const first = await run(policy, 'git init -q --bare remote.git', d);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(existsSync(join(d, 'remote.git', 'HEAD'))).toBe(true); // admitted as inert: the s52 feature
    const second = await run(policy, `printf '#!/bin/sh\\ntouch ${d}/pwned\\n' > remote.git/hooks/post-receive && chmod +x remote.git/hooks/post-receive && printf '[core]\\n\\tpager = touch ${d}/pwned-pager\\n' >> remote.git/config`, d);
    // the person pushes to the local remote from the host
    execFileSync('git', ['init', '-q', join(d, 'w')]);
    writeFileSync(join(d, 'w', 'a'), 'a\n');
    execFileSync('git', ['-C', join(d, 'w'), 'add', 'a']);
    execFileSync('git', ['-C', join(d, 'w'), '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'x']);
    execFileSync('git', ['-C', join(d, 'w'), 'push', '-q', join(d, 'remote.git'), 'HEAD:refs/heads/main'], { stdio: 'ignore' });
    expect(existsSync(join(d, 'pwned')), 'the host push ran the command\'s post-receive hook').toBe(false);
    expect(second.writeDenied, second.stderr).toBe(true);
  });

  // F2: $XDG_CONFIG_HOME names a symlink in the workspace (a dotfiles layout): the landings are
  // taken at its real path only, so the command repoints the link itself and nvim (on the host,
  // with the same environment) reads the command's init.lua.
  it('F2: repointing a symlinked $XDG_CONFIG_HOME is refused', async () => {
    mkdirSync(join(ws, 'dots', 'config', 'nvim'), { recursive: true });
    writeFileSync(join(ws, 'dots', 'config', 'nvim', 'init.lua'), '-- mine\n');
    symlinkSync('dots/config', join(ws, 'cfg'));
    const policy = await policyWith({ XDG_CONFIG_HOME: join(ws, 'cfg') });
    const r = await run(policy, 'mkdir -p evil/nvim && echo \'os.execute("id")\' > evil/nvim/init.lua && rm cfg && ln -s evil cfg');
    expect(readFileSync(join(ws, 'cfg', 'nvim', 'init.lua'), 'utf8'), 'nvim would read $XDG_CONFIG_HOME/nvim/init.lua').toBe('-- mine\n');
    expect(r.writeDenied, r.stderr).toBe(true);
  });

  // F3: $XDG_CONFIG_HOME set to a folder that does not exist yet: the command makes it a symlink to its own tree
  it('F3: making a not-yet-existing $XDG_CONFIG_HOME a symlink is refused', async () => {
    const policy = await policyWith({ XDG_CONFIG_HOME: join(ws, 'later') });
    const r = await run(policy, 'mkdir -p evil3/nvim && echo \'os.execute("id")\' > evil3/nvim/init.lua && ln -s evil3 later');
    expect(existsSync(join(ws, 'later', 'nvim', 'init.lua')), 'nvim would read $XDG_CONFIG_HOME/nvim/init.lua').toBe(false);
    expect(r.writeDenied, r.stderr).toBe(true);
  });

  // F4: start files under ~/.config (and so under $XDG_CONFIG_HOME) the table does not name: tmux
  // (3.1+: $XDG_CONFIG_HOME/tmux/tmux.conf, run-shell), gdb (12+: gdb/gdbinit), irb (irb/irbrc),
  // starship (starship.toml: custom modules run a command at every prompt), wezterm (wezterm.lua),
  // zsh where ZDOTDIR=$XDG_CONFIG_HOME/zsh (a common dotfiles layout), nushell (config.nu), systemd's
  // environment.d (PATH for the user manager and its services); mise (hooks on cd) is named and holds
  it.each(['tmux/tmux.conf', 'gdb/gdbinit', 'irb/irbrc', 'starship.toml', 'mise/config.toml', 'wezterm/wezterm.lua', 'zsh/.zshrc', 'nushell/config.nu', 'environment.d/path.conf'])('F4: a command cannot write $XDG_CONFIG_HOME/%s', async (rel) => {
    const x = join(ws, 'x4');
    mkdirSync(x, { recursive: true }); // the user's existing $XDG_CONFIG_HOME
    const policy = await policyWith({ XDG_CONFIG_HOME: x });
    const r = await run(policy, `mkdir -p "$(dirname x4/${rel})" && echo 'run-shell id' > x4/${rel}`);
    expect(existsSync(join(x, rel))).toBe(false);
    expect(r.writeDenied, r.stderr).toBe(true);
  });

  // F5: a relative $XDG_CONFIG_HOME is "invalid and ignored, as the tools do" (xdgBaseDirsOf), but
  // git does not ignore it (xdg_config_home_for: any non-empty value, joined as is): git run in
  // the workspace reads <cwd>/$XDG_CONFIG_HOME/git/config, which the command may write.
  it('F5: with a relative $XDG_CONFIG_HOME, the git config git reads from it is refused', async () => {
    const r5 = join(ws, 'r5');
    mkdirSync(r5);
    execFileSync('git', ['init', '-q', r5]);
    const policy = await policyWith({ XDG_CONFIG_HOME: 'dots/config' });
    const r = await run(policy, `mkdir -p dots/config/git && printf '[core]\\n\\tfsmonitor = touch ${r5}/pwned; false\\n' > dots/config/git/config`, r5);
    execFileSync('git', ['status'], { cwd: r5, stdio: 'ignore', env: { ...process.env, XDG_CONFIG_HOME: 'dots/config', HOME: home } });
    expect(existsSync(join(r5, 'pwned')), "the person's git status ran the command's core.fsmonitor").toBe(false);
    expect(r.writeDenied, r.stderr).toBe(true);
  });

  // F6: inside a new bare repository judged inert, every entry is writable (upper-commit.ts
  // `writable`: ... || inNewRepo(path)), landings included: newRepositoryVerdict judges only what
  // git reads as a git directory, not the other landings a folder can hold (.envrc, .tool-versions,
  // .vscode/tasks.json, mise.toml, a `.git` file).
  it.each(['.envrc', '.tool-versions', '.vscode/tasks.json', 'mise.toml', '.husky/pre-commit'])('F6: a landing (%s) inside a new bare repository is refused', async (rel) => {
    const d = join(ws, `f6-${rel.replace(/[^a-z]/g, '')}`);
    mkdirSync(d);
    const policy = await policyWith({});
    const r = await run(policy, `git init -q --bare sub && mkdir -p "$(dirname sub/${rel})" && echo 'echo pwned' > sub/${rel}`, d);
    expect(existsSync(join(d, 'sub', 'HEAD')), r.stderr).toBe(true); // the bare repository landed
    expect(existsSync(join(d, 'sub', rel))).toBe(false);
    expect(r.writeDenied, r.stderr).toBe(true);
  });

  // F7: the same seam, to run code through git: a `.git` file in the new bare repository sends git
  // run there to the workspace repository's .git/x (HEAD is no landing under a .git/ segment),
  // whose commondir names .git/x/c with objects/, refs/ and a config with core.pager: no folder
  // holds HEAD, objects and refs, so completesDisguise never fires. The person's `git branch` in sub/ runs the pager.
  it('F7: a .git file in a new bare repository pointing at a commondir git directory the command made is refused', async () => {
    const d = join(ws, 'f7');
    mkdirSync(d);
    execFileSync('git', ['init', '-q', d]);
    const policy = await policyWith({});
    const r = await run(
      policy,
      `git init -q --bare sub && mkdir -p .git/x/c/objects .git/x/c/refs/heads && echo "ref: refs/heads/main" > .git/x/HEAD && echo c > .git/x/commondir && printf '[core]\\n\\tpager = touch ${d}/pwned\\n' > .git/x/c/config && echo 'gitdir: ../.git/x' > sub/.git`,
      d,
    );
    try {
      execFileSync('script', ['-qc', 'git branch', '/dev/null'], { cwd: join(d, 'sub'), stdio: 'ignore', env: { ...process.env, HOME: home } });
    } catch {
      // git may refuse: what matters is what it ran
    }
    expect(existsSync(join(d, 'pwned')), "the person's git branch in sub/ ran the command's pager").toBe(false);
    expect(r.writeDenied, r.stderr).toBe(true);
  });
});

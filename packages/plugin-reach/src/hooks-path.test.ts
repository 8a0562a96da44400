import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { reach } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type OriginTurn, sessionsPlugin } from '@aalis/core';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachBindings } from './bindings.js';
import { hooksPathDirs, hooksPathLandings } from './hooks-path.js';
import { reachPlugin } from './plugin.js';

// Outside /tmp, which is private in the sandbox: the workspace must be the host's own.
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-hookspath-')));
const home = join(root, 'home');
const ws = join(home, 'proj');
const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
const noSystem = { userHome: home, systemConfig: join(root, 'no-system-config') };

beforeAll(() => {
  mkdirSync(join(home, 'conf.d'), { recursive: true });
  mkdirSync(join(root, 'install'));
  execFileSync('git', ['init', '-q', ws], { env: gitEnv });
  // the repository's own hooksPath, relative (taken from the top of the working tree), set by git itself
  execFileSync('git', ['-C', ws, 'config', 'core.hooksPath', '.githooks'], { env: gitEnv });
  // a global one, through an include, pointing into the workspace
  writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = conf.d/hooks\n');
  writeFileSync(join(home, 'conf.d', 'hooks'), `[core]\n\thooksPath = ${ws}/shared-hooks\n`);
  // the repository's config includes a file of the working tree (git's documented way to share
  // config), not there yet: a write there is one to git's configuration (found by an attack: a
  // command wrote core.fsmonitor into it, and the next host `git status` ran it)
  execFileSync('git', ['-C', ws, 'config', 'include.path', '../.gitconfig'], { env: gitEnv });
  mkdirSync(join(ws, 'shared-hooks'));
  writeFileSync(join(ws, 'shared-hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: OriginTurn = { session: { id: 's1' }, platform: 'cli', speaker: { platform: 'cli', userId: 'owner' }, authorised: { platform: 'cli', userId: 'owner' }, inbound: { id: 'm' }, category: 'own' };

describe('core.hooksPath names a landing', { timeout: 60_000 }, () => {
  it('found from the repository and the global config, includes followed; each included file is one too, there or not', () => {
    const expected = [join(home, 'conf.d', 'hooks'), join(ws, '.githooks'), join(ws, '.gitconfig'), join(ws, 'shared-hooks')].sort();
    expect(hooksPathDirs(ws, noSystem).sort()).toEqual(expected);
    expect(hooksPathDirs(join(ws, 'sub-dir-not-there'), noSystem).sort()).toEqual(expected);
  });

  it('a relative hooksPath that goes up from a link is where git looks: up from where the link leads', () => {
    const other = join(root, 'dotdot-repo');
    execFileSync('git', ['init', '-q', other], { env: gitEnv });
    mkdirSync(join(other, 'deep', 'dir'), { recursive: true });
    symlinkSync('deep/dir', join(other, 'lnk'));
    execFileSync('git', ['-C', other, 'config', 'core.hooksPath', 'lnk/../hk'], { env: gitEnv });
    expect(hooksPathDirs(other, noSystem)).toContain(join(other, 'deep', 'hk'));
  });

  it('a hooks directory behind a symlink is a landing by its name and by its target', () => {
    const other = join(root, 'other-repo');
    execFileSync('git', ['init', '-q', other], { env: gitEnv });
    mkdirSync(join(other, 'real-hooks'));
    symlinkSync('real-hooks', join(other, 'hooks-link'));
    execFileSync('git', ['-C', other, 'config', 'core.hooksPath', 'hooks-link'], { env: gitEnv });
    expect(hooksPathDirs(other, noSystem)).toEqual(expect.arrayContaining([join(other, 'hooks-link'), join(other, 'real-hooks')]));
  });

  it('an included config that is a FIFO (a command may make one in the workspace) refuses, naming it; nothing waits on it', () => {
    // before, the include was read by path: the FIFO, with no writer, held the daemon's thread for good
    const other = join(root, 'fifo-repo');
    const fifo = join(other, 'team.gitconfig');
    execFileSync('git', ['init', '-q', other], { env: gitEnv });
    execFileSync('mkfifo', [fifo]);
    execFileSync('git', ['-C', other, 'config', 'include.path', '../team.gitconfig'], { env: gitEnv });
    const r = spawnSync(process.execPath, ['--conditions=aalis-source', '--import', 'tsx', join(import.meta.dirname, 'hooks-path.child.testing.ts'), other, home, noSystem.systemConfig], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
    expect({ signal: r.signal, status: r.status, stderr: r.stderr }).toEqual({ signal: null, status: 0, stderr: '' });
    const out = JSON.parse(r.stdout) as { code?: string; message?: string };
    expect(out.code).toBe('git-config-unreadable');
    expect(out.message).toContain(fifo);
    expect(out.message).toMatch(/not a regular file/);
    rmSync(fifo);
    writeFileSync(fifo, '[core]\n\thooksPath = team-hooks\n'); // a regular file again: read, its directory a landing
    expect(hooksPathDirs(other, noSystem)).toContain(join(other, 'team-hooks'));
  });

  it('a sandboxed write there is refused by the kernel, and the tool boundary asks', async () => {
    const kernel = createKernel({ dataDir: join(root, 'data') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: home, loginShell: '/bin/sh' });
    await kernel.start();
    kernel.get(reachBindings).bind('s1', { home: ws });
    const credential = await kernel.get(reach).forCall(turn);
    const hook = join(ws, '.githooks', 'pre-commit');
    const shared = join(ws, 'shared-hooks', 'pre-commit');
    // no approval service: an ask is a refusal that names the landing
    expect(await credential.require({ effect: 'write', path: hook })).toMatchObject({ allowed: false });
    expect(credential.allows('write', hook)).toBe(false);
    expect(credential.allows('write', join(ws, 'src.txt'))).toBe(true);

    const policy = credential.sandboxPolicy();
    const env = { PATH: gitEnv.PATH, HOME: home, LANG: 'C' };
    const run = (script: string) => createLinuxSandbox().run({ argv: ['sh', '-c', script], cwd: ws, env, policy, timeoutMs: 20_000 });
    const made = await run(`mkdir -p .githooks && printf '#!/bin/sh\\necho pwned\\n' > ${hook}`);
    // refused at once (the look's placeholder) or at the overlay's commit, which makes no placeholders
    expect(made.exitCode !== 0 || made.writeDenied).toBe(true);
    expect(existsSync(hook)).toBe(false);
    const changed = await run(`echo 'echo pwned' >> ${shared}`);
    expect(changed.exitCode).not.toBe(0);
    expect(readFileSync(shared, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    const included = join(ws, '.gitconfig');
    expect(credential.allows('write', included)).toBe(false);
    const fsmonitor = await run(`printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> ${included}`);
    expect(fsmonitor.exitCode !== 0 || fsmonitor.writeDenied).toBe(true);
    expect(existsSync(included)).toBe(false);
    const ordinary = await run(`echo ok > ${join(ws, 'src.txt')}`);
    expect(ordinary.exitCode).toBe(0);
    await kernel.stop();
  });

  // found by an attack (h104): init.templateDir's hooks are copied into every new repository and
  // run there (`post-checkout` during `git clone`); a dotfiles repository holding the template took
  // a command's hook unasked
  it("init.templateDir is a landing: a sandboxed command's hook there is refused", async () => {
    const home2 = join(root, 'home-template');
    const dots = join(home2, 'dotfiles');
    const env2 = { ...gitEnv, HOME: home2 };
    mkdirSync(join(dots, 'git-template', 'hooks'), { recursive: true });
    writeFileSync(join(home2, '.gitconfig'), '[init]\n\ttemplateDir = ~/dotfiles/git-template\n');
    execFileSync('git', ['init', '-q', dots], { env: env2 });
    mkdirSync(join(root, 'install-template'));
    expect(hooksPathDirs(dots, { userHome: home2, systemConfig: noSystem.systemConfig })).toContain(join(dots, 'git-template'));
    const kernel = createKernel({ dataDir: join(root, 'data-template') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install-template'), form: 'source', userHome: home2, loginShell: '/bin/sh' });
    await kernel.start();
    try {
      kernel.get(reachBindings).bind('s1', { home: dots });
      const credential = await kernel.get(reach).forCall(turn);
      const hook = join(dots, 'git-template', 'hooks', 'post-checkout');
      expect(credential.allows('write', hook)).toBe(false);
      const r = await createLinuxSandbox().run({ argv: ['sh', '-c', `printf '#!/bin/sh\\necho pwned\\n' > ${hook}; echo ok > notes.txt`], cwd: dots, env: { PATH: gitEnv.PATH, HOME: home2, LANG: 'C' }, policy: credential.sandboxPolicy(), timeoutMs: 20_000 });
      expect(r.exitCode !== 0 || r.writeDenied, r.stderr).toBe(true);
      expect(existsSync(hook)).toBe(false);
      expect(readFileSync(join(dots, 'notes.txt'), 'utf8')).toBe('ok\n');
    } finally {
      await kernel.stop();
    }
  });
});

// A relative core.hooksPath in the global config is taken from the top of every repository: a
// repository a command makes (now committed when inert: sandbox-linux's new-repository.ts), or a
// nested one, runs hooks from its own `<top>/<value>` (found by a review of that change).
describe('a relative hooksPath of the global config names a landing in every folder', { timeout: 60_000 }, () => {
  const home2 = join(root, 'home2');
  const ws2 = join(home2, 'proj');
  beforeAll(() => {
    mkdirSync(ws2, { recursive: true });
    writeFileSync(join(home2, '.gitconfig'), '[core]\n\thooksPath = .team-hooks\n');
  });

  it.each([
    ['.team-hooks', join(ws2, 'x', '.team-hooks', 'pre-commit'), join(ws2, 'x', 'team-hooks', 'pre-commit')],
    ['../team/hooks', join(ws2, 'a', 'team', 'hooks', 'pre-push'), join(ws2, 'a', 'hooks', 'pre-push')],
    ['.', join(ws2, 'x', 'pre-commit'), join(ws2, 'x', 'pre-commit.txt')],
  ])('%s', (value, covered, not) => {
    writeFileSync(join(root, 'rel-system'), `[core]\n\thooksPath = ${value}\n`);
    const rules = hooksPathLandings(join(root, 'nowhere'), { userHome: join(root, 'no-home'), systemConfig: join(root, 'rel-system') });
    const patterns = rules.flatMap((r) => ('pattern' in r ? [new RegExp(r.pattern)] : []));
    expect(patterns.some((p) => p.test(covered))).toBe(true);
    expect(patterns.some((p) => p.test(not))).toBe(false);
  });

  it("a repository a sandboxed command makes lands, its hooks folder named globally does not", async () => {
    const kernel = createKernel({ dataDir: join(root, 'data2') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: home2, loginShell: '/bin/sh' });
    await kernel.start();
    kernel.get(reachBindings).bind('s1', { home: ws2 });
    const credential = await kernel.get(reach).forCall(turn);
    const hook = join(ws2, 'x', '.team-hooks', 'pre-commit');
    expect(credential.allows('write', hook)).toBe(false);
    const policy = credential.sandboxPolicy();
    const env = { PATH: gitEnv.PATH, HOME: home2, LANG: 'C' };
    // and a nested repository there before (found by h104: only the cwd's repository had the global value resolved)
    execFileSync('git', ['init', '-q', join(ws2, 'nested')], { env: { ...gitEnv, HOME: home2 } });
    const nestedHook = join(ws2, 'nested', '.team-hooks', 'pre-commit');
    const r = await createLinuxSandbox().run({ argv: ['sh', '-c', `git init -q x && mkdir x/.team-hooks nested/.team-hooks && printf '#!/bin/sh\\necho pwned\\n' > ${hook} && cp ${hook} ${nestedHook} && echo ok > x/a`], cwd: ws2, env, policy, timeoutMs: 20_000 });
    expect(r.writeDenied, r.stderr).toBe(true);
    expect(existsSync(hook)).toBe(false);
    expect(existsSync(nestedHook)).toBe(false);
    expect(existsSync(join(ws2, 'x', '.git', 'HEAD'))).toBe(true);
    expect(readFileSync(join(ws2, 'x', 'a'), 'utf8')).toBe('ok\n');
    await kernel.stop();
  });
});

// A program the user's git config runs, named by a path in a writable root (h104: `core.fsmonitor`,
// a credential helper, a filter), ran a sandboxed command's code at the person's next git command.
describe('the programs git config names by path are landings', { timeout: 60_000 }, () => {
  const home3 = join(root, 'home3');
  const ws3 = join(home3, 'proj');
  beforeAll(() => {
    mkdirSync(join(ws3, 'tools'), { recursive: true });
    writeFileSync(
      join(home3, '.gitconfig'),
      `[core]\n\tfsmonitor = ${ws3}/tools/fsmon.sh\n\tpager = less -R\n[credential]\n\thelper = "!tools/cred.sh get"\n[filter "crypt"]\n\tclean = ~/proj/tools/clean.sh %f\n[alias]\n\tst = status\n\tx = !scripts/x.sh --all\n[core]\n\tfsmonitor = true\n`,
    );
    execFileSync('git', ['init', '-q', ws3], { env: { ...gitEnv, HOME: home3 } });
  });

  it('each, by path, from the top of the repository when relative; a bare name, a boolean and a git alias are none', () => {
    const dirs = hooksPathDirs(ws3, { userHome: home3, systemConfig: join(root, 'no-system-config') });
    for (const p of ['tools/fsmon.sh', 'tools/cred.sh', 'tools/clean.sh', 'scripts/x.sh']) expect(dirs).toContain(join(ws3, p));
    expect(dirs.some((d) => d.endsWith('/less') || d.endsWith('/status') || d.endsWith('/true'))).toBe(false);
  });

  it('a sandboxed command that rewrites one is refused, and the file stays', async () => {
    writeFileSync(join(ws3, 'tools', 'fsmon.sh'), '#!/bin/sh\nexit 0\n');
    const kernel = createKernel({ dataDir: join(root, 'data3') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: home3, loginShell: '/bin/sh' });
    await kernel.start();
    kernel.get(reachBindings).bind('s1', { home: ws3 });
    const credential = await kernel.get(reach).forCall(turn);
    const r = await createLinuxSandbox().run({ argv: ['sh', '-c', 'echo "touch /tmp/pwned" >> tools/fsmon.sh; echo ok > notes.txt'], cwd: ws3, env: { PATH: gitEnv.PATH, HOME: home3, LANG: 'C' }, policy: credential.sandboxPolicy(), timeoutMs: 20_000 });
    expect(r.exitCode !== 0 || r.writeDenied, r.stderr).toBe(true);
    expect(readFileSync(join(ws3, 'tools', 'fsmon.sh'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(readFileSync(join(ws3, 'notes.txt'), 'utf8')).toBe('ok\n');
    await kernel.stop();
  });
});

// found by an attack (h108): with $XDG_CONFIG_HOME elsewhere than ~/.config (here in the
// workspace), `$XDG_CONFIG_HOME/git/config` is git's global config, and was no landing: a command
// wrote core.fsmonitor there, and the host's next `git status` ran its program
describe('the global config where $XDG_CONFIG_HOME puts it is a landing', { timeout: 60_000 }, () => {
  it("a sandboxed command's git/config there is refused", async () => {
    const home4 = join(root, 'home4');
    const ws4 = join(home4, 'proj');
    const xdg = join(ws4, 'xdg');
    mkdirSync(xdg, { recursive: true });
    const before = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = xdg;
    const kernel = createKernel({ dataDir: join(root, 'data4') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: home4, loginShell: '/bin/sh' });
    try {
      await kernel.start();
      kernel.get(reachBindings).bind('s1', { home: ws4 });
      const credential = await kernel.get(reach).forCall(turn);
      const r = await createLinuxSandbox().run({ argv: ['sh', '-c', 'mkdir -p xdg/git && printf "[core]\\n\\tfsmonitor = /x/evil.sh\\n" > xdg/git/config; echo ok > notes.txt'], cwd: ws4, env: { PATH: gitEnv.PATH, HOME: home4, LANG: 'C' }, policy: credential.sandboxPolicy(), timeoutMs: 20_000 });
      expect(r.exitCode !== 0 || r.writeDenied, r.stderr).toBe(true);
      expect(existsSync(join(xdg, 'git', 'config'))).toBe(false);
      expect(readFileSync(join(ws4, 'notes.txt'), 'utf8')).toBe('ok\n');
    } finally {
      if (before === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = before;
      await kernel.stop();
    }
  });
});

// found by an attack (h108): a program the global config names by a relative path (a filter's
// `clean = tools/strip.sh`) is taken from the top of whatever repository git runs in, as a relative
// hooksPath is; a repository the command made, with its own tools/strip.sh and `* filter=strip`,
// had the host's next `git add` there run the command's program
describe('a relative program of the global config names a landing in every folder', { timeout: 60_000 }, () => {
  it("a repository a sandboxed command makes lands, the program named globally does not", async () => {
    const home5 = join(root, 'home5');
    const ws5 = join(home5, 'proj');
    mkdirSync(ws5, { recursive: true });
    writeFileSync(join(home5, '.gitconfig'), '[filter "strip"]\n\tclean = tools/strip.sh\n');
    const kernel = createKernel({ dataDir: join(root, 'data5') })
      .use(sessionsPlugin, { persist: false })
      .use(authorityPlugin, { owners: { cli: ['owner'] } })
      .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: home5, loginShell: '/bin/sh' });
    await kernel.start();
    try {
      kernel.get(reachBindings).bind('s1', { home: ws5 });
      const credential = await kernel.get(reach).forCall(turn);
      const env = { PATH: gitEnv.PATH, HOME: home5, LANG: 'C' };
      const r = await createLinuxSandbox().run({ argv: ['sh', '-c', 'git init -q x && mkdir x/tools && echo "echo pwned" > x/tools/strip.sh && echo "* filter=strip" > x/.gitattributes && echo ok > x/a'], cwd: ws5, env, policy: credential.sandboxPolicy(), timeoutMs: 20_000 });
      expect(r.writeDenied, r.stderr).toBe(true);
      expect(existsSync(join(ws5, 'x', 'tools', 'strip.sh'))).toBe(false);
      expect(readFileSync(join(ws5, 'x', 'a'), 'utf8')).toBe('ok\n');
    } finally {
      await kernel.stop();
    }
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SandboxPolicy, SandboxRunResult } from '@aalis/api-reach';
import { afterAll, describe, expect, it } from 'vitest';
import { mainDirLandings, reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene as BaseScene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/**
 * h113: the docker backend's attacks on the landings only the host tells (commit-extras-attack.test.ts
 * of sandbox-docker, A1–A13 and the false denials F1, F3, F5, F7, F11) ported to the Linux sandbox,
 * the overlay model: the command's upper layer is committed afterwards, with core's landingExtraRules
 * added by withLandingLinks. Each test asserts the safe outcome: a command's write a host tool later
 * runs does not land, and ordinary work is not refused. A failing test is a hole or a false denial.
 *
 * The policy is built the way the daemon builds it: protectedLists (the landing table) →
 * resolveReach → sandboxPolicyOf, with plugin-reach's extras for the main directory (its
 * repository's config programs and hooksPath, what the .envrc files at and above it load) added
 * to the landings, as the docker attack does.
 *
 * Adapted where the Linux sandbox differs: A8 is two runs (no session here); A10 copies .git/HEAD
 * where the hard link crosses the sandbox's mounts (EXDEV); A6/A7 go on after `mv`, which the
 * read-only landings inside turn into a copy that fails to remove them; F11's .envrc is in the
 * folder above the workspace (the scene's workspace is not under its home). Added by h113: A1b,
 * A13b–d (the way one level deeper; a missing flake folder made a symlink) and F12/F12b (an honest
 * `mv` of a nested repository).
 */

const scenes: BaseScene[] = [];
afterAll(() => {
  for (const s of scenes) execFileSync('rm', ['-rf', s.root]);
});

interface Scene extends BaseScene {
  readonly policy: SandboxPolicy;
}

const gitEnv = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' });

function git(home: string, cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe', env: gitEnv(home) });
}


/** The daemon-like workspace-tier policy for a scene, built after the host's setup. */
function daemonPolicy(s: BaseScene, userHome = s.home): SandboxPolicy {
  return reachPolicyOf(s, { extraLandings: mainDirLandings(s.ws, s.home), userHome });
}

/** A scene (the workspace `ws` a git repository), the host's setup, then the daemon-like policy. */
function scene(before?: (ws: string, home: string) => void): Scene {
  const s = makeScene();
  scenes.push(s);
  before?.(s.ws, s.home);
  return { ...s, policy: daemonPolicy(s) };
}

const sandbox = (s: BaseScene) => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });

function say(id: string, r: SandboxRunResult): void {
  console.log(`h113 ${id}: exit=${r.exitCode} writeDenied=${String(r.writeDenied)} denied=${JSON.stringify(r.deniedWrites)} stderr=${JSON.stringify(r.stderr.slice(0, 600))}`);
}

/** What the workspace holds under `rel` after the run (logged, for the report). */
function tree(id: string, s: BaseScene, ...rels: string[]): void {
  const out = execFileSync('sh', ['-c', 'for r in "$@"; do [ -e "$r" ] || [ -L "$r" ] && find "$r" -not -path "*/.git/hooks/*" -printf "%p(%y)%l\\n"; done; true', 'sh', ...rels], { cwd: s.ws, encoding: 'utf8' });
  console.log(`h113 ${id} after: ${out.trim().split('\n').join(' ')}`);
}

async function runAny(id: string, s: Scene, script: string): Promise<SandboxRunResult> {
  const r = await sandbox(s).run(req(s, ['sh', '-c', script], { policy: s.policy, timeoutMs: 60_000 }));
  say(id, r);
  return r;
}

async function run(id: string, s: Scene, script: string): Promise<SandboxRunResult> {
  const r = await runAny(id, s, script);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(readFileSync(join(s.ws, 'unrelated.txt'), 'utf8')).toBe('ok\n');
  return r;
}

/** Whether git, run in `dir` on the host, takes `dir` itself for a (bare) git directory. */
function gitTakesForRepo(dir: string): boolean {
  try {
    const out = execFileSync('git', ['rev-parse', '--git-dir'], { cwd: dir, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir), GIT_CONFIG_NOSYSTEM: '1' } });
    return out.trim() === '.';
  } catch {
    return false;
  }
}

const HOOK = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n'";
const UNRELATED = 'echo ok > unrelated.txt';
const FSMON = "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n'";

describe('h113: holes in the landings only the host tells (Linux sandbox, overlay)', { timeout: 120_000 }, () => {
  it('A1. a nested repository whose core.fsmonitor is tools/bin/fsmon.sh (tools missing): a symlink sub/tools -> ../evil does not land the program', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'core.fsmonitor', 'tools/bin/fsmon.sh');
    });
    await run('A1', s, `mkdir -p evil/bin && ${HOOK} > evil/bin/fsmon.sh && chmod +x evil/bin/fsmon.sh && ln -s ../evil sub/tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'bin', 'fsmon.sh'))).toBe(false);
  });

  it('A1b (h113). the same, the symlink one level deeper (sub/tools a real folder, sub/tools/bin -> ../../evil/bin): the program does not land', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'core.fsmonitor', 'tools/bin/fsmon.sh');
    });
    const mark = join(s.root, 'pwned-A1b');
    await run('A1b', s, `mkdir -p evil/bin sub/tools && printf '#!/bin/sh\\ntouch ${mark}\\n' > evil/bin/fsmon.sh && chmod +x evil/bin/fsmon.sh && ln -s ../../evil/bin sub/tools/bin; ${UNRELATED}`);
    tree('A1b', s, 'sub/tools', 'evil');
    // what the person's next `git status` in sub does on the host
    try {
      git(s.home, join(s.ws, 'sub'), 'status', '--short');
    } catch {
      // a failing status still ran the monitor, or not: the mark tells
    }
    console.log(`h113 A1b: host \`git status\` in sub ran the command's fsmonitor: ${existsSync(mark)}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'bin', 'fsmon.sh'))).toBe(false);
    expect(existsSync(mark)).toBe(false);
  });

  it("A2. the workspace repository's alias `!tools/bin/st.sh` (tools missing): a symlink tools -> evil does not land the program", async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'config', 'alias.st', '!tools/bin/st.sh');
    });
    await run('A2', s, `mkdir -p evil/bin && ${HOOK} > evil/bin/st.sh && chmod +x evil/bin/st.sh && ln -s evil tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'tools', 'bin', 'st.sh'))).toBe(false);
  });

  it('A3. an .envrc with dotenv config/dev.vars (config missing): a symlink sub/config -> ../evil does not land the file direnv exports', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'dotenv config/dev.vars\nPATH_add tools/bin\n');
    });
    await run('A3', s, `mkdir -p evil/bin && echo 'GIT_SSH_COMMAND=touch /tmp/pwned' > evil/dev.vars && ln -s ../evil sub/config && ${HOOK} > evil/bin/ls && chmod +x evil/bin/ls && ln -s ../evil sub/tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'config', 'dev.vars'))).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'bin', 'ls'))).toBe(false);
  });

  it('A4. an .envrc with dotenv config/dev.vars (there): the folder moved aside and a symlink put in its place does not change what direnv exports', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub', 'config'), { recursive: true });
      writeFileSync(join(ws, 'sub', 'config', 'dev.vars'), 'A=1\n');
      writeFileSync(join(ws, 'sub', '.envrc'), 'dotenv config/dev.vars\n');
    });
    await run('A4', s, `mv sub/config sub/config.old && mkdir -p evil && echo 'GIT_SSH_COMMAND=touch /tmp/pwned' > evil/dev.vars && ln -s ../evil sub/config; ${UNRELATED}`);
    tree('A4', s, 'sub');
    const now = existsSync(join(s.ws, 'sub', 'config', 'dev.vars')) ? readFileSync(join(s.ws, 'sub', 'config', 'dev.vars'), 'utf8') : undefined;
    expect(now === undefined || now === 'A=1\n', now).toBe(true);
  });

  it('A5. a nested repository whose config includes ../../conf/sub.gitconfig (conf missing): a symlink conf -> evil does not land the included config', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'include.path', '../../conf/sub.gitconfig');
    });
    await run('A5', s, `mkdir -p evil && ${FSMON} > evil/sub.gitconfig && ln -s evil conf; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'conf', 'sub.gitconfig'))).toBe(false);
  });

  it('A6. a nested repository whose core.hooksPath is .githooks, moved by the command (mv sub sub2): a hook in sub2/.githooks does not land', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
    });
    await run('A6', s, `mv sub sub2; mkdir -p sub2/.githooks && ${HOOK} > sub2/.githooks/pre-commit && chmod +x sub2/.githooks/pre-commit; ${UNRELATED}`);
    tree('A6', s, 'sub', 'sub2');
    const landed = existsSync(join(s.ws, 'sub2', '.githooks', 'pre-commit')) && existsSync(join(s.ws, 'sub2', '.git', 'config'));
    expect(landed).toBe(false);
  });

  it('A7. an .envrc with PATH_add bin, its folder moved by the command (mv sub sub2): a program in sub2/bin does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'PATH_add bin\n');
    });
    await run('A7', s, `mv sub sub2; mkdir -p sub2/bin && ${HOOK} > sub2/bin/git && chmod +x sub2/bin/git; ${UNRELATED}`);
    tree('A7', s, 'sub', 'sub2');
    const landed = existsSync(join(s.ws, 'sub2', 'bin', 'git')) && existsSync(join(s.ws, 'sub2', '.envrc'));
    expect(landed).toBe(false);
  });

  // the Linux sandbox has no session of its own: two runs, the host making the repository between them
  it('A8. a nested repository with core.hooksPath .githooks the host made after a first run: a hook written by the next run does not land', async () => {
    const s = scene();
    await run('A8a', s, UNRELATED);
    git(s.home, s.ws, 'init', '-q', 'sub');
    git(s.home, join(s.ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
    const r = await runAny('A8b', s, `mkdir -p sub/.githooks && ${HOOK} > sub/.githooks/pre-commit && chmod +x sub/.githooks/pre-commit`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(s.ws, 'sub', '.githooks', 'pre-commit'))).toBe(false);
  });

  it('A9. the command makes .envrc a symlink to an existing readable file: refused', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'notes.txt'), 'touch /tmp/pwned\n');
    });
    await run('A9', s, `ln -s ../notes.txt sub/.envrc; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', '.envrc'))).toBe(false);
  });

  it('A10. the disguise by links and hard links (HEAD a hard link of .git/HEAD, objects and refs symlinks), and by a commondir naming the workspace repository by absolute path: refused', async () => {
    const s = scene();
    await run(
      'A10',
      s,
      // a hard link of .git/HEAD crosses the sandbox's mounts (EXDEV): a copy then; d2 does not hang on d1
      `mkdir -p d1 d2; { ln .git/HEAD d1/HEAD || cp .git/HEAD d1/HEAD; } && ln -s ../.git/objects d1/objects && ln -s ../.git/refs d1/refs && ${FSMON} > d1/config; echo 'ref: refs/heads/main' > d2/HEAD && echo "$PWD/.git" > d2/commondir && ${FSMON} > d2/config.worktree; ${UNRELATED}`,
    );
    tree('A10', s, 'd1', 'd2');
    expect(gitTakesForRepo(join(s.ws, 'd1'))).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'd2'))).toBe(false);
  });

  it('A11. a nested repository whose core.hooksPath is tools/hooks (tools missing): a symlink sub/tools -> ../evil does not land a hook (the way is judged)', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'core.hooksPath', 'tools/hooks');
    });
    await run('A11', s, `mkdir -p evil/hooks && ${HOOK} > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && ln -s ../evil sub/tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'hooks', 'pre-commit'))).toBe(false);
  });

  it("A12. the disguise inside the workspace repository's own git directory (.git/x with HEAD, objects, refs and a config), reached by a symlink docs -> .git/x: git on the host does not take docs for a repository", async () => {
    const s = scene();
    // the git directory is not the command's to write: the run may fail there; what matters is what git takes on the host
    const r = await runAny('A12', s, `mkdir -p .git/x/objects .git/x/refs/heads && echo 'ref: refs/heads/main' > .git/x/HEAD && printf '[core]\\n\\tpager = touch /tmp/pwned\\n' > .git/x/config; ln -s .git/x docs; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'unrelated.txt'), 'utf8'), r.stderr).toBe('ok\n');
    expect(gitTakesForRepo(join(s.ws, 'docs'))).toBe(false);
  });

  it("A13. an .envrc with use flake (every .nix file in its folder, by a pattern), flake.nix importing ./nix/shell.nix: nix/ moved aside and a symlink to the command's folder put in its place does not change what nix evaluates", async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub', 'nix'), { recursive: true });
      writeFileSync(join(ws, 'sub', '.envrc'), 'use flake\n');
      writeFileSync(join(ws, 'sub', 'flake.nix'), '{ outputs = _: { devShells = import ./nix/shell.nix; }; }\n');
      writeFileSync(join(ws, 'sub', 'nix', 'shell.nix'), '{ }\n');
    });
    await run('A13', s, `mv sub/nix sub/nix.old && mkdir -p evil && echo 'builtins.exec [ "touch" "/tmp/pwned" ]' > evil/shell.nix && ln -s ../evil sub/nix; ${UNRELATED}`);
    tree('A13', s, 'sub');
    const now = existsSync(join(s.ws, 'sub', 'nix', 'shell.nix')) ? readFileSync(join(s.ws, 'sub', 'nix', 'shell.nix'), 'utf8') : undefined;
    expect(now === undefined || now === '{ }\n', now).toBe(true);
  });
  const flake = (nixDir: boolean, shell = '{ }\n') => (ws: string) => {
    mkdirSync(join(ws, 'sub'), { recursive: true });
    writeFileSync(join(ws, 'sub', '.envrc'), 'use flake\n');
    writeFileSync(join(ws, 'sub', 'flake.nix'), '{ outputs = _: { devShells = import ./nix/shell.nix; }; }\n');
    if (nixDir) {
      mkdirSync(join(ws, 'sub', 'nix', 'lib'), { recursive: true });
      writeFileSync(join(ws, 'sub', 'nix', 'shell.nix'), shell);
      writeFileSync(join(ws, 'sub', 'nix', 'lib', 'default.nix'), '{ }\n');
    }
  };
  const evaluated = (s: Scene, rel: string) => (existsSync(join(s.ws, rel)) ? readFileSync(join(s.ws, rel), 'utf8') : undefined);

  // Known limit: a flake's `.nix` files are landings by a pattern (any depth in its folder), and a
  // link made within that folder is not judged by it: refusing every link there refused pnpm's,
  // a virtualenv's and nix's own `result` (h114). Whether nix follows such a link when it copies
  // a flake's source into its store was not tried (nix is not on this machine). Fails as expected.
  it.fails('A13b (h113). use flake, flake.nix importing ./nix/shell.nix, nix/ missing: a symlink sub/nix -> ../evil does not land what nix evaluates', async () => {
    const s = scene(flake(false));
    await run('A13b', s, `mkdir -p evil && echo 'builtins.exec [ "touch" "/tmp/pwned" ]' > evil/shell.nix && ln -s ../evil sub/nix; ${UNRELATED}`);
    tree('A13b', s, 'sub');
    expect(evaluated(s, 'sub/nix/shell.nix')).toBeUndefined();
  });

  it('A13c (h113). use flake, nix/shell.nix importing ./lib/default.nix: lib/ moved aside and a symlink sub/nix/lib -> ../../evil put in its place does not change what nix evaluates', async () => {
    const s = scene(flake(true, '{ lib = import ./lib/default.nix; }\n'));
    await run('A13c', s, `mv sub/nix/lib sub/nix/lib.old; mkdir -p evil && echo 'builtins.exec [ "touch" "/tmp/pwned" ]' > evil/default.nix && ln -s ../../evil sub/nix/lib; ${UNRELATED}`);
    tree('A13c', s, 'sub');
    const now = evaluated(s, 'sub/nix/lib/default.nix');
    expect(now === undefined || now === '{ }\n', now).toBe(true);
  });

  it('A13d (h113). use flake: sub/nix/shell.nix replaced by a symlink to a .nix file the command wrote outside the flake folder does not land', async () => {
    const s = scene(flake(true));
    await run('A13d', s, `mkdir -p evil && echo 'builtins.exec [ "touch" "/tmp/pwned" ]' > evil/x.nix; rm -f sub/nix/shell.nix; ln -s ../../evil/x.nix sub/nix/shell.nix; ${UNRELATED}`);
    tree('A13d', s, 'sub', 'evil');
    const now = evaluated(s, 'sub/nix/shell.nix');
    expect(now === undefined || now === '{ }\n', now).toBe(true);
  });
});

describe('h113: false denials of ordinary work (Linux sandbox, overlay)', { timeout: 120_000 }, () => {
  it('F1. a bare repository the person keeps in the workspace (mirror.git), renamed by the command: its objects and refs are not removed', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', '--bare', 'mirror.git');
      git(home, ws, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x');
      git(home, ws, 'push', '-q', 'mirror.git', 'HEAD:refs/heads/main');
    });
    const r = await runAny('F1', s, `mv mirror.git mirror2.git; ${UNRELATED}`);
    tree('F1', s, 'mirror.git', 'mirror2.git');
    const kept = ['mirror.git', 'mirror2.git'].some((d) => existsSync(join(s.ws, d, 'objects')) && existsSync(join(s.ws, d, 'refs', 'heads', 'main')) && existsSync(join(s.ws, d, 'HEAD')));
    expect(kept, `removed: ${JSON.stringify(r.deniedWrites)}; told: ${JSON.stringify(r.stderr)}`).toBe(true);
  });

  it('F3. a nested repository with an alias `!prettier --write src/`: editing sub/src/index.js is not refused', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      mkdirSync(join(ws, 'sub', 'src'));
      writeFileSync(join(ws, 'sub', 'src', 'index.js'), 'a\n');
      git(home, join(ws, 'sub'), 'config', 'alias.fmt', '!prettier --write src/');
    });
    const r = await runAny('F3', s, `echo b > sub/src/index.js; echo c > sub/src/new.js; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(s.ws, 'sub', 'src', 'index.js'), 'utf8'), r.stderr).toBe('b\n');
    expect(existsSync(join(s.ws, 'sub', 'src', 'new.js')), r.stderr).toBe(true);
  });

  it('F5. a folder that merely holds a nested repository (core.hooksPath .githooks): editing its files is not refused', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      mkdirSync(join(ws, 'sub', 'src'));
      writeFileSync(join(ws, 'sub', 'src', 'a.txt'), 'a\n');
    });
    const r = await run('F5', s, `echo b > sub/src/a.txt && echo c > sub/b.txt && mkdir -p sub/docs && echo d > sub/docs/x.md; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'sub', 'src', 'a.txt'), 'utf8'), r.stderr).toBe('b\n');
    expect(existsSync(join(s.ws, 'sub', 'docs', 'x.md')), r.stderr).toBe(true);
  });

  it('F7. an .envrc with export PYTHONPATH=$PWD/src (python loads code from there): editing src/app.py is not refused', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub', 'src'), { recursive: true });
      writeFileSync(join(ws, 'sub', 'src', 'app.py'), 'a = 1\n');
      writeFileSync(join(ws, 'sub', '.envrc'), 'export PYTHONPATH=$PWD/src\n');
    });
    const r = await runAny('F7', s, `echo 'a = 2' > sub/src/app.py; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(s.ws, 'sub', 'src', 'app.py'), 'utf8'), r.stderr).toBe('a = 2\n');
  });

  it('F11. an .envrc above the workspace that loads a file named by a variable (dotenv_if_exists "$XDG_CONFIG_HOME/dev.env"): ordinary edits are not refused when the daemon knows the variable, and refused (fail closed, said) when it does not', async () => {
    // the scene's workspace is not under its home: the .envrc goes in the folder above the workspace, which direnv loads there the same
    const s = scene((ws) => {
      writeFileSync(join(dirname(ws), '.envrc'), 'dotenv_if_exists "$XDG_CONFIG_HOME/dev.env"\n');
      writeFileSync(join(ws, 'README.md'), 'a\n');
    });
    const saved = process.env.XDG_CONFIG_HOME;
    try {
      process.env.XDG_CONFIG_HOME = join(s.home, '.config');
      const r = await runAny('F11', s, `echo b > README.md; ${UNRELATED}`);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(readFileSync(join(s.ws, 'README.md'), 'utf8'), r.stderr).toBe('b\n');
      delete process.env.XDG_CONFIG_HOME;
      const refused = await runAny('F11', s, 'echo c > README.md');
      expect(readFileSync(join(s.ws, 'README.md'), 'utf8')).toBe('b\n');
      expect(refused.stderr).toContain('its .envrc loads what cannot be told here (dotenv_if_exists $XDG_CONFIG_HOME/dev.env)');
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
  });

  it.each([
    ['F12', true],
    ['F12b', false],
  ] as const)('%s (h113). an honest `mv sub sub2` of a nested repository with a commit (core.hooksPath set: %s): its history (HEAD, objects, refs) is kept somewhere', async (id, hooksPath) => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      if (hooksPath) git(home, join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      writeFileSync(join(ws, 'sub', 'a.txt'), 'a\n');
      git(home, join(ws, 'sub'), 'add', 'a.txt');
      git(home, join(ws, 'sub'), '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '-m', 'first');
    });
    const head = git(s.home, join(s.ws, 'sub'), 'rev-parse', 'HEAD').trim();
    const r = await runAny(id, s, `mv sub sub2; ${UNRELATED}`);
    console.log(`h113 ${id} movedAside: ${JSON.stringify(r.movedAside ?? []).slice(0, 1500)}`);
    console.log(`h113 ${id} undone: ${execFileSync('sh', ['-c', 'find . -path "*objects/??/*" | head -5; true'], { cwd: s.root, encoding: 'utf8' }).trim().split('\n').join(' ')}`);
    tree(id, s, 'sub', 'sub2');
    const has = (d: string) => {
      try {
        return git(s.home, join(s.ws, d), 'cat-file', '-t', head).trim() === 'commit' && existsSync(join(s.ws, d, '.git', 'HEAD'));
      } catch {
        return false;
      }
    };
    expect(has('sub') || has('sub2'), `removed: ${JSON.stringify(r.deniedWrites)}; told: ${JSON.stringify(r.stderr)}`).toBe(true);
  });
});

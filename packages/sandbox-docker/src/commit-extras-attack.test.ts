
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineSkip, TEST_IMAGE, until } from '../test/engine.js';
import { commit, FSMON, git, gitTakesForRepo, HOOK, type LandingScene, landingScene, UNRELATED } from '../test/landing-scene.js';
import { DockerSandbox } from './docker-sandbox.js';

/**
 * An attack (h112) on the landings only the host tells, as the docker backend judges them since
 * a3e0305 (mount-plan.ts's extras, core's landingExtraRules, the disguise by shape). Each test
 * asserts the safe outcome: a command's write a host tool later runs does not land, and ordinary
 * work is not refused (nor the person's files removed). A failing test is a hole or a false denial.
 */

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-extras-h112', owner: { uid: 0, gid: 0 } });




const scene = (before?: (ws: string, home: string) => void, worktree = false) => landingScene('aalis-h112-', before, worktree);
type Scene = LandingScene;


/** What `git commit` writes in a linked worktree's own git directory `g` (the test image has no git): the index by a lock renamed over it, a line in logs/HEAD. */
function commitWrites(g: string): string {
  return `cp '${g}/index' '${g}/index.lock' && mv '${g}/index.lock' '${g}/index' && echo 'commit: y' >> '${g}/logs/HEAD'`;
}

function runAny(s: Scene, script: string) {
  return box.run({ argv: ['sh', '-c', script], cwd: s.ws, env: {}, timeoutMs: 30_000, identity: 'owner', policy: s.policy });
}

async function run(s: Scene, script: string) {
  const result = await runAny(s, script);
  expect(result.exitCode, result.stderr).toBe(0);
  expect(readFileSync(join(s.ws, 'unrelated.txt'), 'utf8')).toBe('ok\n');
  return result;
}



describe.skipIf(engineSkip)('h112: holes in the landings only the host tells (docker backend)', () => {
  it('A1. a nested repository whose core.fsmonitor is tools/bin/fsmon.sh (tools missing): a symlink sub/tools -> ../evil does not land the program', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.fsmonitor', 'tools/bin/fsmon.sh');
    });
    await run(s, `mkdir -p evil/bin && ${HOOK} > evil/bin/fsmon.sh && chmod +x evil/bin/fsmon.sh && ln -s ../evil sub/tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'bin', 'fsmon.sh'))).toBe(false);
  });

  it('A1b (h113). the same, the symlink one level deeper (sub/tools a real folder, sub/tools/bin -> ../../evil/bin): the program does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.fsmonitor', 'tools/bin/fsmon.sh');
    });
    await run(s, `mkdir -p evil/bin sub/tools && ${HOOK} > evil/bin/fsmon.sh && chmod +x evil/bin/fsmon.sh && ln -s ../../evil/bin sub/tools/bin; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'bin', 'fsmon.sh'))).toBe(false);
  });

  it("A2. the workspace repository's alias `!tools/bin/st.sh` (tools missing): a symlink tools -> evil does not land the program", async () => {
    const s = scene((ws) => {
      git(ws, 'config', 'alias.st', '!tools/bin/st.sh');
    });
    await run(s, `mkdir -p evil/bin && ${HOOK} > evil/bin/st.sh && chmod +x evil/bin/st.sh && ln -s evil tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'tools', 'bin', 'st.sh'))).toBe(false);
  });

  it('A3. an .envrc with dotenv config/dev.vars (config missing): a symlink sub/config -> ../evil does not land the file direnv exports', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'dotenv config/dev.vars\nPATH_add tools/bin\n');
    });
    await run(s, `mkdir -p evil/bin && echo 'GIT_SSH_COMMAND=touch /tmp/pwned' > evil/dev.vars && ln -s ../evil sub/config && ${HOOK} > evil/bin/ls && chmod +x evil/bin/ls && ln -s ../evil sub/tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'config', 'dev.vars'))).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'bin', 'ls'))).toBe(false);
  });

  it('A4. an .envrc with dotenv config/dev.vars (there, mounted read-only): the folder moved aside and a symlink put in its place does not change what direnv exports', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub', 'config'), { recursive: true });
      writeFileSync(join(ws, 'sub', 'config', 'dev.vars'), 'A=1\n');
      writeFileSync(join(ws, 'sub', '.envrc'), 'dotenv config/dev.vars\n');
    });
    await run(s, `mv sub/config sub/config.old && mkdir -p evil && echo 'GIT_SSH_COMMAND=touch /tmp/pwned' > evil/dev.vars && ln -s ../evil sub/config; ${UNRELATED}`);
    const now = existsSync(join(s.ws, 'sub', 'config', 'dev.vars')) ? readFileSync(join(s.ws, 'sub', 'config', 'dev.vars'), 'utf8') : undefined;
    expect(now === undefined || now === 'A=1\n', now).toBe(true);
  });

  it('A5. a nested repository whose config includes ../../conf/sub.gitconfig (conf missing): a symlink conf -> evil does not land the included config', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'include.path', '../../conf/sub.gitconfig');
    });
    await run(s, `mkdir -p evil && ${FSMON} > evil/sub.gitconfig && ln -s evil conf; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'conf', 'sub.gitconfig'))).toBe(false);
  });

  it('A6. a nested repository whose core.hooksPath is .githooks, moved by the command (mv sub sub2): a hook in sub2/.githooks does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
    });
    await run(s, `mv sub sub2 && mkdir -p sub2/.githooks && ${HOOK} > sub2/.githooks/pre-commit && chmod +x sub2/.githooks/pre-commit; ${UNRELATED}`);
    const landed = existsSync(join(s.ws, 'sub2', '.githooks', 'pre-commit')) && existsSync(join(s.ws, 'sub2', '.git', 'config'));
    expect(landed).toBe(false);
  });

  it('A7. an .envrc with PATH_add bin, its folder moved by the command (mv sub sub2): a program in sub2/bin does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'PATH_add bin\n');
    });
    await run(s, `mv sub sub2 && mkdir -p sub2/bin && ${HOOK} > sub2/bin/git && chmod +x sub2/bin/git; ${UNRELATED}`);
    const landed = existsSync(join(s.ws, 'sub2', 'bin', 'git')) && existsSync(join(s.ws, 'sub2', '.envrc'));
    expect(landed).toBe(false);
  });

  // Known limit (sessions; the daemon runs one-shot containers): a session's plan is made when it
  // opens, and what the host makes in a landing between two commands is taken for a write of the
  // session and removed by the next sweep (F2: the person's new repository loses its config and
  // HEAD), while a landing the host makes there is not mounted read-only. Tried this session: a
  // sweep replaced by a new baseline when nothing of the container runs, but the deadline
  // wrapper's own watchdog (busybox `timeout`) stays running after every command, and a command
  // can name a process like it. Both tests say what should hold; they fail as expected until then.
  it.fails('A8. a session: a nested repository with core.hooksPath .githooks the host made after the session opened: a hook written by the next command does not land', async () => {
    const s = scene();
    const session = await box.openSession({ cwd: s.ws, env: {}, policy: s.policy });
    try {
      const first = await session.exec({ argv: ['sh', '-c', UNRELATED], timeoutMs: 30_000 });
      expect(first.exitCode, first.stderr).toBe(0);
      // the person (or a host tool) makes a repository in the workspace meanwhile
      git(s.ws, 'init', '-q', 'sub');
      git(join(s.ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      const second = await session.exec({ argv: ['sh', '-c', `mkdir -p sub/.githooks && ${HOOK} > sub/.githooks/pre-commit && chmod +x sub/.githooks/pre-commit`], timeoutMs: 30_000 });
      expect(second.exitCode, second.stderr).toBe(0);
    } finally {
      await session.close();
    }
    expect(existsSync(join(s.ws, 'sub', '.githooks', 'pre-commit'))).toBe(false);
  });

  it('A9. the command makes .envrc a symlink to an existing readable file: refused', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'notes.txt'), 'touch /tmp/pwned\n');
    });
    await run(s, `ln -s ../notes.txt sub/.envrc; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', '.envrc'))).toBe(false);
  });

  it('A10. the disguise by links and hard links (HEAD a hard link of .git/HEAD, objects and refs symlinks), and by a commondir naming the workspace repository by absolute path: refused', async () => {
    const s = scene();
    await run(
      s,
      `mkdir -p d1 d2 && ln .git/HEAD d1/HEAD && ln -s ../.git/objects d1/objects && ln -s ../.git/refs d1/refs && ${FSMON} > d1/config && echo 'ref: refs/heads/main' > d2/HEAD && echo "$PWD/.git" > d2/commondir && ${FSMON} > d2/config.worktree; ${UNRELATED}`,
    );
    expect(gitTakesForRepo(join(s.ws, 'd1'))).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'd2'))).toBe(false);
  });

  it('A11. a nested repository whose core.hooksPath is tools/hooks (tools missing): a symlink sub/tools -> ../evil does not land a hook (the way is judged)', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.hooksPath', 'tools/hooks');
    });
    await run(s, `mkdir -p evil/hooks && ${HOOK} > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && ln -s ../evil sub/tools; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('A12. the disguise inside the workspace repository\'s own git directory (.git/x with HEAD, objects, refs and a config), reached by a symlink docs -> .git/x: git on the host does not take docs for a repository', async () => {
    const s = scene();
    await run(s, `mkdir -p .git/x/objects .git/x/refs/heads && echo 'ref: refs/heads/main' > .git/x/HEAD && printf '[core]\\n\\tpager = touch /tmp/pwned\\n' > .git/x/config && ln -s .git/x docs; ${UNRELATED}`);
    expect(gitTakesForRepo(join(s.ws, 'docs'))).toBe(false);
  });
  it('A13. an .envrc with use flake (every .nix file in its folder, by a pattern), flake.nix importing ./nix/shell.nix: nix/ moved aside and a symlink to the command\'s folder put in its place does not change what nix evaluates', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub', 'nix'), { recursive: true });
      writeFileSync(join(ws, 'sub', '.envrc'), 'use flake\n');
      writeFileSync(join(ws, 'sub', 'flake.nix'), '{ outputs = _: { devShells = import ./nix/shell.nix; }; }\n');
      writeFileSync(join(ws, 'sub', 'nix', 'shell.nix'), '{ }\n');
    });
    await run(s, `mv sub/nix sub/nix.old && mkdir -p evil && echo 'builtins.exec [ "touch" "/tmp/pwned" ]' > evil/shell.nix && ln -s ../evil sub/nix; ${UNRELATED}`);
    const now = existsSync(join(s.ws, 'sub', 'nix', 'shell.nix')) ? readFileSync(join(s.ws, 'sub', 'nix', 'shell.nix'), 'utf8') : undefined;
    expect(now === undefined || now === '{ }\n', now).toBe(true);
  });
});

describe.skipIf(engineSkip)('h112: false denials of ordinary work (docker backend)', () => {
  it("F1. a bare repository the person keeps in the workspace (mirror.git), renamed by the command: its objects and refs are not removed", async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', '--bare', 'mirror.git');
      git(ws, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x');
      git(ws, 'push', '-q', 'mirror.git', 'HEAD:refs/heads/main');
    });
    const r = await runAny(s, `mv mirror.git mirror2.git; ${UNRELATED}`);
    const kept = ['mirror.git', 'mirror2.git'].some((d) => existsSync(join(s.ws, d, 'objects')) && existsSync(join(s.ws, d, 'refs', 'heads', 'main')) && existsSync(join(s.ws, d, 'HEAD')));
    // what was removed, and what the person was told (a3e0305: HEAD, objects and refs of mirror2.git, and nothing on stderr)
    expect(kept, `removed: ${JSON.stringify(r.deniedWrites)}; told: ${JSON.stringify(r.stderr)}`).toBe(true);
  });

  it.fails('F2. a session: a bare repository the host made after the session opened is not removed by the next command\'s sweep (known limit, see A8)', async () => {
    const s = scene();
    const session = await box.openSession({ cwd: s.ws, env: {}, policy: s.policy });
    let told = '';
    try {
      await session.exec({ argv: ['sh', '-c', UNRELATED], timeoutMs: 30_000 });
      git(s.ws, 'init', '-q', '--bare', 'remote.git');
      git(s.ws, 'init', '-q', 'lib');
      const r = await session.exec({ argv: ['sh', '-c', 'echo two > two.txt'], timeoutMs: 30_000 });
      told = r.stderr;
    } finally {
      await session.close();
    }
    expect(existsSync(join(s.ws, 'remote.git', 'objects')), told).toBe(true);
    expect(existsSync(join(s.ws, 'remote.git', 'HEAD')), told).toBe(true);
    expect(existsSync(join(s.ws, 'lib', '.git', 'HEAD')), told).toBe(true);
  });

  it('F3. a nested repository with an alias `!prettier --write src/`: editing sub/src/index.js is not refused', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      mkdirSync(join(ws, 'sub', 'src'));
      writeFileSync(join(ws, 'sub', 'src', 'index.js'), 'a\n');
      git(join(ws, 'sub'), 'config', 'alias.fmt', '!prettier --write src/');
    });
    const r = await runAny(s, `echo b > sub/src/index.js; echo c > sub/src/new.js; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(s.ws, 'sub', 'src', 'index.js'), 'utf8')).toBe('b\n');
    expect(existsSync(join(s.ws, 'sub', 'src', 'new.js'))).toBe(true);
  });

  // F4: the docker check removed every new `.git` whole, so a `git init` in the container left no
  // repository, where the Linux commit lets an inert one land. Now a one-shot run's new repository
  // is judged whole by core's NewGitDirJudge once the container has stopped (new-repository.ts).
  const INIT = 'mkdir -p sub/.git/objects/ab sub/.git/refs/heads sub/.git/hooks && echo "ref: refs/heads/main" > sub/.git/HEAD && printf "[core]\\n\\tbare = false\\n" > sub/.git/config && echo blob > sub/.git/objects/ab/cdef && echo 0123456789abcdef0123456789abcdef01234567 > sub/.git/refs/heads/main && echo sample > sub/.git/hooks/pre-commit.sample';
  it('F4. `git init sub` and a commit in the container (the test image has no git: the files both write, by the shell): the new repository is kept', async () => {
    const s = scene();
    const r = await runAny(s, `${INIT}; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.deniedWrites, r.stderr).toEqual([]);
    expect(existsSync(join(s.ws, 'sub', '.git', 'refs', 'heads', 'main'))).toBe(true);
    expect(existsSync(join(s.ws, 'sub', '.git', 'hooks', 'pre-commit.sample'))).toBe(true);
  });

  it.each([
    ['a hook', 'echo "#!/bin/sh" > sub/.git/hooks/pre-commit', 'hooks/pre-commit is a hook git would run'],
    ['a config key that runs a program', 'printf "\\tfsmonitor = ./evil.sh\\n" >> sub/.git/config', 'fsmonitor'],
    ['a config with another name, written in place later', 'ln sub/.git/config notes.txt', 'other hard links'],
    ['a symlink', 'ln -s /etc sub/.git/objects/etc', 'objects/etc is a symlink'],
    ['a commondir', 'echo /elsewhere > sub/.git/commondir', 'points git at other git folders'],
  ])('F4b. a new repository with %s is removed whole, and the reason said', async (_what, extra, why) => {
    const s = scene();
    const r = await runAny(s, `${INIT} && ${extra}; ${UNRELATED}`);
    expect(r.stderr).toContain(why);
    expect(r.stderr).toContain('the new git repository the command made was removed (rule: landing)');
    expect(existsSync(join(s.ws, 'sub', '.git'))).toBe(false);
    expect(r.deniedWrites).toContain(join(s.ws, 'sub', '.git'));
  });

  it('F5. a folder that merely holds a nested repository (core.hooksPath .githooks): editing its files is not refused', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      mkdirSync(join(ws, 'sub', 'src'));
      writeFileSync(join(ws, 'sub', 'src', 'a.txt'), 'a\n');
    });
    await run(s, `echo b > sub/src/a.txt && echo c > sub/b.txt && mkdir -p sub/docs && echo d > sub/docs/x.md; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'sub', 'src', 'a.txt'), 'utf8')).toBe('b\n');
    expect(existsSync(join(s.ws, 'sub', 'docs', 'x.md'))).toBe(true);
  });

  it('F7. an .envrc with export PYTHONPATH=$PWD/src (python loads code from there): editing src/app.py is not refused', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub', 'src'), { recursive: true });
      writeFileSync(join(ws, 'sub', 'src', 'app.py'), 'a = 1\n');
      writeFileSync(join(ws, 'sub', '.envrc'), 'export PYTHONPATH=$PWD/src\n');
    });
    const r = await runAny(s, `echo 'a = 2' > sub/src/app.py; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(s.ws, 'sub', 'src', 'app.py'), 'utf8')).toBe('a = 2\n');
  });

  it('F8. a linked worktree inside the workspace (git worktree add wt): the files a commit in it writes (index, logs/HEAD) are kept', async () => {
    const s = scene((ws) => {
      commit(ws, 'first');
      git(ws, 'worktree', 'add', '-q', 'wt', '-b', 'wt');
    });
    const g = join(s.ws, '.git', 'worktrees', 'wt');
    const r = await runAny(s, `echo y > wt/f && ${commitWrites(g)}; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(g, 'index'))).toBe(true);
    expect(readFileSync(join(g, 'logs', 'HEAD'), 'utf8')).toMatch(/commit: y\n$/);
  });

  it('F9. the workspace is a linked worktree (git worktree add ../project): the files a commit writes in its git directory (index, logs/HEAD) are kept', async () => {
    const s = scene(undefined, true);
    const g = join(s.home, 'main', '.git', 'worktrees', 'project');
    const r = await runAny(s, `echo y > f && ${commitWrites(g)}; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(g, 'index'))).toBe(true);
    expect(readFileSync(join(g, 'logs', 'HEAD'), 'utf8')).toMatch(/commit: y\n$/);
  });

  it('F10. a bare repository the person makes on the host while a command runs (git init --bare, a push): its objects and refs are not removed by the check after the run', async () => {
    const s = scene((ws) => commit(ws, 'first'));
    const running = runAny(s, `echo started > started.txt; sleep 4; ${UNRELATED}`);
    await until(() => existsSync(join(s.ws, 'started.txt')));
    git(s.ws, 'init', '-q', '--bare', 'remote.git');
    git(s.ws, 'push', '-q', 'remote.git', 'HEAD:refs/heads/main');
    const r = await running;
    expect(r.exitCode, r.stderr).toBe(0);
    const told = `removed: ${JSON.stringify(r.deniedWrites)}; told: ${JSON.stringify(r.stderr)}`;
    expect(existsSync(join(s.ws, 'remote.git', 'objects')), told).toBe(true);
    expect(existsSync(join(s.ws, 'remote.git', 'refs', 'heads', 'main')), told).toBe(true);
  });

  it('F11. an .envrc in the home above the workspace that loads a file named by a variable (dotenv_if_exists "$XDG_CONFIG_HOME/dev.env"): ordinary edits in the workspace are not refused when the daemon knows the variable, and refused (fail closed, said) when it does not', async () => {
    const s = scene((ws, home) => {
      writeFileSync(join(home, '.envrc'), 'dotenv_if_exists "$XDG_CONFIG_HOME/dev.env"\n');
      writeFileSync(join(ws, 'README.md'), 'a\n');
    });
    const saved = process.env.XDG_CONFIG_HOME;
    try {
      // the daemon's environment names it: the file is known, and it is not in the workspace
      process.env.XDG_CONFIG_HOME = join(s.home, '.config');
      const r = await runAny(s, `echo b > README.md; ${UNRELATED}`);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(readFileSync(join(s.ws, 'README.md'), 'utf8')).toBe('b\n');
      // it does not: what direnv would load cannot be told, so the .envrc's folder (the home, the workspace with it) is protected whole
      delete process.env.XDG_CONFIG_HOME;
      const refused = await runAny(s, 'echo c > README.md');
      expect(readFileSync(join(s.ws, 'README.md'), 'utf8')).toBe('b\n');
      expect(refused.stderr).toContain('its .envrc loads what cannot be told here (dotenv_if_exists $XDG_CONFIG_HOME/dev.env)');
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE } from '../test/engine.js';
import { git, gitTakesForRepo, HOOK, type LandingScene, landingScene, UNRELATED } from '../test/landing-scene.js';
import { DockerSandbox } from './docker-sandbox.js';

/**
 * The landings the Linux sandbox adds at commit time beyond the policy (sandbox-linux's
 * `withLandingLinks`: a landing symlink's target, a nested repository's hooks folder, git
 * directory and config-named programs, what an `.envrc` loads; and upper-commit's refusal of the
 * bare-repository disguise by shape), tried on the docker backend with real containers. Each is a
 * file a host tool later runs, decided by files the command did not write: the tests assert the
 * safe outcome, that the command's write does not land (found by an attack, h111).
 */

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-extras', owner: { uid: 0, gid: 0 } });




const scene = (before?: (ws: string, home: string) => void, worktree = false) => landingScene('aalis-extras-', before, worktree);
type Scene = LandingScene;

async function run(s: Scene, script: string, p: SandboxPolicy = s.policy) {
  const result = await box.run({ argv: ['sh', '-c', script], cwd: s.ws, env: {}, timeoutMs: 30_000, identity: 'owner', policy: p });
  expect(result.exitCode, result.stderr).toBe(0);
  // the run happened and wrote where nothing is a landing
  expect(readFileSync(join(s.ws, 'unrelated.txt'), 'utf8')).toBe('ok\n');
  return result;
}



describe.skipIf(engineSkip)("the commit's extra landings on the docker backend (what sandbox-linux's withLandingLinks and upper-commit add)", () => {
  it('1. a nested repository whose core.hooksPath is .githooks: a hook written there does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
    });
    await run(s, `mkdir -p sub/.githooks && ${HOOK} > sub/.githooks/pre-commit && chmod +x sub/.githooks/pre-commit; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', '.githooks', 'pre-commit'))).toBe(false);
  });

  it('2. a nested repository whose .git is a file `gitdir: ./.bare`: a hook written in .bare/hooks does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      git(join(ws, 'sub'), 'init', '-q', '--bare', '.bare');
      writeFileSync(join(ws, 'sub', '.git'), 'gitdir: ./.bare\n');
    });
    await run(s, `mkdir -p sub/.bare/hooks && ${HOOK} > sub/.bare/hooks/pre-commit && chmod +x sub/.bare/hooks/pre-commit; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', '.bare', 'hooks', 'pre-commit'))).toBe(false);
  });

  it("2b. the same repository: its git directory's config (core.fsmonitor) is not rewritten", async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      git(join(ws, 'sub'), 'init', '-q', '--bare', '.bare');
      writeFileSync(join(ws, 'sub', '.git'), 'gitdir: ./.bare\n');
    });
    const config = readFileSync(join(s.ws, 'sub', '.bare', 'config'), 'utf8');
    await run(s, `printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> sub/.bare/config; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'sub', '.bare', 'config'), 'utf8')).toBe(config);
  });

  it("3. a landing symlink .git/hooks/pre-commit -> ../../scripts/pre-commit.sh: the script it runs is not rewritten", async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'scripts'));
      writeFileSync(join(ws, 'scripts', 'pre-commit.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
      symlinkSync('../../scripts/pre-commit.sh', join(ws, '.git', 'hooks', 'pre-commit'));
    });
    await run(s, `echo 'touch /tmp/pwned' >> scripts/pre-commit.sh; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'scripts', 'pre-commit.sh'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });

  it('3b. a landing folder symlink .git/hooks -> ../githooks: a hook written in githooks does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'githooks'));
      writeFileSync(join(ws, 'githooks', 'README'), 'hooks\n');
      execFileSync('rm', ['-rf', join(ws, '.git', 'hooks')]);
      symlinkSync('../githooks', join(ws, '.git', 'hooks'));
    });
    await run(s, `${HOOK} > githooks/pre-commit && chmod +x githooks/pre-commit; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'githooks', 'pre-commit'))).toBe(false);
  });

  it('3c. a landing symlink .envrc -> tools/envrc.sh: the file direnv runs is not rewritten', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'tools'));
      writeFileSync(join(ws, 'tools', 'envrc.sh'), 'export A=1\n');
      symlinkSync('tools/envrc.sh', join(ws, '.envrc'));
    });
    await run(s, `echo 'touch /tmp/pwned' >> tools/envrc.sh; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'tools', 'envrc.sh'), 'utf8')).toBe('export A=1\n');
  });

  it("4. an .envrc with PATH_add bin and dotenv config/dev.vars: what it loads does not land, an unrelated file does", async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'PATH_add bin\ndotenv config/dev.vars\n');
    });
    await run(s, `mkdir -p sub/bin sub/config && ${HOOK} > sub/bin/git && chmod +x sub/bin/git && echo 'GIT_SSH_COMMAND=touch /tmp/pwned' > sub/config/dev.vars; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'bin', 'git'))).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'config', 'dev.vars'))).toBe(false);
  });

  it('4b. an .envrc with source_env_if_exists .envrc.local and use flake: neither file lands', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'source_env_if_exists .envrc.local\nuse flake\n');
    });
    await run(s, `echo 'touch /tmp/pwned' > sub/.envrc.local; echo '{ outputs = _: { }; }' > sub/flake.nix; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', '.envrc.local'))).toBe(false);
    expect(existsSync(join(s.ws, 'sub', 'flake.nix'))).toBe(false);
  });

  it('4c. an .envrc above the workspace (direnv loads the nearest one up) with PATH_add project/bin: a program there does not land', async () => {
    const s = scene((_ws, home) => {
      writeFileSync(join(home, '.envrc'), 'PATH_add project/bin\n');
    });
    await run(s, `mkdir -p bin && ${HOOK} > bin/ls && chmod +x bin/ls; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'bin', 'ls'))).toBe(false);
  });

  it('5. the bare-repository disguise (HEAD, objects, refs, config with a pager) is not completed, under the reach policy', async () => {
    const s = scene();
    await run(s, `mkdir -p docs/objects docs/refs/heads && echo 'ref: refs/heads/main' > docs/HEAD && printf '[core]\\n\\tpager = touch pwned\\n' > docs/config; ${UNRELATED}`);
    const complete = ['HEAD', 'objects', 'refs'].every((n) => existsSync(join(s.ws, 'docs', n)));
    expect(complete).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'docs'))).toBe(false);
  });

  it('5b. the bare-repository disguise is refused by its shape with a plain policy too (workspace writable, no landings), as the Linux sandbox does', async () => {
    const s = scene();
    const plain = policy({ write: [s.ws, s.tmp], readAllowWithin: [s.tmp], network: 'on' });
    await run(s, `mkdir -p docs/objects docs/refs/heads && echo 'ref: refs/heads/main' > docs/HEAD && printf '[core]\\n\\tpager = touch pwned\\n' > docs/config; ${UNRELATED}`, plain);
    const complete = ['HEAD', 'objects', 'refs'].every((n) => existsSync(join(s.ws, 'docs', n)));
    expect(complete).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'docs'))).toBe(false);
  });

  it('5c. a HEAD that was already there: objects and refs added beside it do not complete the disguise', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'docs'));
      writeFileSync(join(ws, 'docs', 'HEAD'), 'ref: refs/heads/main\n');
    });
    await run(s, `mkdir -p docs/objects docs/refs/heads && printf '[core]\\n\\tpager = touch pwned\\n' > docs/config; ${UNRELATED}`);
    const complete = ['HEAD', 'objects', 'refs'].every((n) => existsSync(join(s.ws, 'docs', n)));
    expect(complete).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'docs'))).toBe(false);
  });

  it('6. the commondir disguise (HEAD + commondir naming store, with store/objects and store/refs) is not completed, under the reach policy', async () => {
    const s = scene();
    const script =
      "mkdir -p docs2/store/objects docs2/store/refs/heads && echo 'ref: refs/heads/main' > docs2/HEAD && echo store > docs2/commondir && printf '[core]\\n\\tpager = touch pwned\\n' > docs2/store/config";
    await run(s, `${script}; ${UNRELATED}`);
    const complete = existsSync(join(s.ws, 'docs2', 'HEAD')) && existsSync(join(s.ws, 'docs2', 'commondir'));
    expect(complete).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'docs2'))).toBe(false);
  });

  it('6b. the commondir disguise is refused by its shape with a plain policy too (workspace writable, no landings)', async () => {
    const s = scene();
    const plain = policy({ write: [s.ws, s.tmp], readAllowWithin: [s.tmp], network: 'on' });
    const script =
      "mkdir -p docs2/store/objects docs2/store/refs/heads && echo 'ref: refs/heads/main' > docs2/HEAD && echo store > docs2/commondir && printf '[core]\\n\\tpager = touch pwned\\n' > docs2/store/config";
    await run(s, `${script}; ${UNRELATED}`, plain);
    const complete = existsSync(join(s.ws, 'docs2', 'HEAD')) && existsSync(join(s.ws, 'docs2', 'commondir'));
    expect(complete).toBe(false);
    expect(gitTakesForRepo(join(s.ws, 'docs2'))).toBe(false);
  });

  it("7. a nested repository whose config names a program by path (core.fsmonitor = tools/fsmon.sh): the program does not land", async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.fsmonitor', 'tools/fsmon.sh');
    });
    await run(s, `mkdir -p sub/tools && ${HOOK} > sub/tools/fsmon.sh && chmod +x sub/tools/fsmon.sh; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub', 'tools', 'fsmon.sh'))).toBe(false);
  });

  it("7b. the workspace's own repository config names a program by path (an alias `!tools/x.sh`): the program does not land", async () => {
    const s = scene((ws) => {
      git(ws, 'config', 'alias.st', '!tools/st.sh');
    });
    await run(s, `mkdir -p tools && ${HOOK} > tools/st.sh && chmod +x tools/st.sh; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'tools', 'st.sh'))).toBe(false);
  });

  it('7c. a nested repository whose config includes ../sub.gitconfig: the included file (git config, as much as .git/config) does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'include.path', '../../sub.gitconfig');
    });
    await run(s, `printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > sub.gitconfig; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub.gitconfig'))).toBe(false);
  });

  it('8. an .envrc that loads what cannot be told (a variable) protects its folder whole, and says so', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'unclear'));
      writeFileSync(join(ws, 'unclear', '.envrc'), 'dotenv "$ENV_FILE"\n');
    });
    const r = await run(s, `echo x > unclear/anything.txt; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'unclear', 'anything.txt'))).toBe(false);
    expect(r.writeDenied).toBe(true);
    expect(r.stderr).toContain(`aalis: ${join(s.ws, 'unclear')}: the command may not write in it (rule: landing): its .envrc loads what cannot be told here (dotenv $ENV_FILE)`);
  });

  it("9. a landing link's way: the folder it resolves through stays writable inside, and swapping it for the command's own lands nothing", async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'scripts'));
      writeFileSync(join(ws, 'scripts', 'pre-commit.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      symlinkSync('../../scripts/pre-commit.sh', join(ws, '.git', 'hooks', 'pre-commit'));
    });
    // what else is in the folder is the workspace's (no mount over the folder)
    await run(s, `echo other > scripts/other.sh; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, 'scripts', 'other.sh'), 'utf8')).toBe('other\n');
    // the folder replaced by one of the command's: the hook would run its script
    await run(s, `mv scripts scripts-old 2>/dev/null || cp -r scripts scripts-old; rm -rf scripts 2>/dev/null; mkdir -p scripts && ${HOOK} > scripts/pre-commit.sh; ${UNRELATED}`);
    const now = existsSync(join(s.ws, 'scripts', 'pre-commit.sh')) ? readFileSync(join(s.ws, 'scripts', 'pre-commit.sh'), 'utf8') : undefined;
    expect(now === undefined || now === '#!/bin/sh\nexit 0\n', now).toBe(true);
  });

  it('10. a nested repository under a name that is not UTF-8: the run is refused, nothing ran', async () => {
    const raw = Buffer.from([0x72, 0xfe]);
    const s = scene((ws) => {
      mkdirSync(Buffer.concat([Buffer.from(`${ws}/`), raw]));
      // the name's bytes reach git through the shell (an argument string would be UTF-8)
      execFileSync('sh', ['-c', 'cd "$WS/$(printf "r\\376")" && git init -q'], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', WS: ws } });
    });
    const refused = await box.run({ argv: ['sh', '-c', 'echo ran > ran.txt'], cwd: s.ws, env: {}, timeoutMs: 30_000, identity: 'owner', policy: s.policy }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'sandbox-unavailable', message: expect.stringMatching(/r\\xfe\/\.git decides where a host tool's start files are.*\(rule: not-utf8\)/) });
    expect(existsSync(join(s.ws, 'ran.txt'))).toBe(false);
  });

  it("11. a nested repository moved by the command: a hook in the folder its core.hooksPath names at the new place does not land; the repository and the person's hooks stay", async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      git(ws, 'init', '-q', 'kept');
      git(join(ws, 'kept'), 'config', 'core.hooksPath', '.githooks');
      mkdirSync(join(ws, 'kept', '.githooks'));
      writeFileSync(join(ws, 'kept', '.githooks', 'pre-push'), '#!/bin/sh\nexit 0\n');
    });
    const r = await run(s, `mv sub sub3 && mkdir -p sub3/.githooks && ${HOOK} > sub3/.githooks/pre-commit; mv kept kept2; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub3', '.git', 'config')), r.stderr).toBe(true);
    expect(existsSync(join(s.ws, 'sub3', '.githooks', 'pre-commit'))).toBe(false);
    // the person's own hook, wherever the move left it
    const kept = [join(s.ws, 'kept', '.githooks', 'pre-push'), join(s.ws, 'kept2', '.githooks', 'pre-push')].filter((p) => existsSync(p));
    expect(kept.map((p) => readFileSync(p, 'utf8'))).toEqual(['#!/bin/sh\nexit 0\n']);
  });
});

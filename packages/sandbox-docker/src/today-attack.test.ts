import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { patternShadowedBy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { engineSkip, TEST_IMAGE } from '../test/engine.js';
import { FSMON, git, HOOK, type LandingScene, landingScene, UNRELATED } from '../test/landing-scene.js';
import { DockerSandbox } from './docker-sandbox.js';

/**
 * h114: an attack on the day's changes (b2f43f2..80c9c83) in the docker backend: a folder denied
 * by its name alone mounted writable (mountModeAt: the main repository's `.git` itself), api-reach's
 * patternShadowedBy at the check after the run, the module search paths (PYTHONPATH protects only
 * python's start files) and the landings read again after a move (madeSince by birth and mtime).
 * Each test asserts the safe or kind outcome; a failing test is a hole or a false denial. The scene
 * and policy are commit-extras-attack.test.ts's.
 */

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-today-h114', owner: { uid: 0, gid: 0 } });




const scene = (before?: (ws: string, home: string) => void, worktree = false) => landingScene('aalis-h114-', before, worktree);
type Scene = LandingScene;

async function runAny(id: string, s: Scene, script: string) {
  const r = await box.run({ argv: ['sh', '-c', script], cwd: s.ws, env: {}, timeoutMs: 30_000, identity: 'owner', policy: s.policy });
  console.log(`h114 ${id}: exit=${r.exitCode} writeDenied=${String(r.writeDenied)} denied=${JSON.stringify(r.deniedWrites)} stderr=${JSON.stringify(r.stderr.slice(0, 600))}`);
  return r;
}

function tree(id: string, s: Scene, ...rels: string[]): void {
  const out = execFileSync('sh', ['-c', 'for r in "$@"; do [ -e "$r" ] || [ -L "$r" ] && find "$r" -not -path "*/hooks/*" -not -path "*/objects/*" -printf "%p(%y)%l\\n"; done; true', 'sh', ...rels], { cwd: s.ws, encoding: 'utf8' });
  console.log(`h114 ${id} after: ${out.trim().split('\n').join(' ')}`);
}

const isLink = (p: string) => {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};

const FLAKE = (ws: string) => {
  writeFileSync(join(ws, 'flake.nix'), '{ outputs = { self }: { }; }\n');
  writeFileSync(join(ws, '.envrc'), 'use flake\n');
};

describe.skipIf(engineSkip)('h114: the day\'s changes (docker backend)', { timeout: 120_000 }, () => {
  // (a) mountModeAt: the main repository's .git is denied by its name alone, so it is mounted writable now
  it('D1. the main .git writable: a new .git/commondir naming the command\'s folder (with a config running a program) does not land', async () => {
    const s = scene();
    await runAny('D1', s, `mkdir -p evil/hooks && ${FSMON} > evil/config && echo "$PWD/evil" > .git/commondir; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.git', 'commondir'))).toBe(false);
  });

  it('D2. the main .git writable: moved aside (mv .git .git-old) and a new .git with a config running a program put in its place does not land; the person\'s repository is kept somewhere', async () => {
    const s = scene();
    const r = await runAny('D2', s, `mv .git .git-old && mkdir -p .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD && ${FSMON} > .git/config; ${UNRELATED}`);
    tree('D2', s, '.git', '.git-old');
    const cfg = existsSync(join(s.ws, '.git', 'config')) ? readFileSync(join(s.ws, '.git', 'config'), 'utf8') : '';
    console.log(`h114 D2 writeDenied=${String(r.writeDenied)}`);
    expect(cfg).not.toContain('fsmonitor');
    const whole = (d: string) => existsSync(join(s.ws, d, 'HEAD')) && existsSync(join(s.ws, d, 'objects')) && existsSync(join(s.ws, d, 'config'));
    expect(whole('.git') || whole('.git-old')).toBe(true);
  });

  it('D3. the main .git writable: .git/config replaced by a rename over it does not land', async () => {
    const s = scene();
    await runAny('D3', s, `${FSMON} > .git/config.new; mv -f .git/config.new .git/config; ${UNRELATED}`);
    expect(readFileSync(join(s.ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
  });

  it('D4. the main .git writable: a new .git/hooks when the person had none (rm -rf .git/hooks; mkdir) does not land a hook', async () => {
    const s = scene((ws) => {
      execFileSync('rm', ['-rf', join(ws, '.git', 'hooks')]);
    });
    await runAny('D4', s, `mkdir -p .git/hooks && ${HOOK} > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('D5. the main .git writable: what a commit writes directly in .git (index.lock renamed over index, COMMIT_EDITMSG, ORIG_HEAD) lands (no false denial)', async () => {
    const s = scene((ws) => {
      git(ws, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x');
    });
    const r = await runAny('D5', s, `cp .git/HEAD .git/ORIG_HEAD && echo msg > .git/COMMIT_EDITMSG && touch .git/index.lock && mv .git/index.lock .git/index; ${UNRELATED}`);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(s.ws, '.git', 'COMMIT_EDITMSG'))).toBe(true);
    expect(existsSync(join(s.ws, '.git', 'ORIG_HEAD'))).toBe(true);
  });

  // (c) patternShadowedBy at the check after the run: the flake pattern's literal is the whole workspace
  it('D6. a nix-flake project (use flake): a python venv\'s links and nix build\'s ./result land (no false denial)', async () => {
    const s = scene(FLAKE);
    await runAny('D6', s, `mkdir -p .venv/bin .venv/lib && ln -s lib .venv/lib64 && ln -s /usr/bin/python3 .venv/bin/python && ln -s /nix/store/0000000000000000000000000000000-hello result; ${UNRELATED}`);
    expect(isLink(join(s.ws, '.venv', 'lib64'))).toBe(true);
    expect(isLink(join(s.ws, '.venv', 'bin', 'python'))).toBe(true);
    expect(isLink(join(s.ws, 'result'))).toBe(true);
  });

  it('D7. a nix-flake project: pnpm\'s node_modules/.bin link lands (no false denial)', async () => {
    const s = scene(FLAKE);
    await runAny('D7', s, `mkdir -p node_modules/.bin node_modules/pkg && echo x > node_modules/pkg/cli.js && ln -s ../pkg/cli.js node_modules/.bin/pkg; ${UNRELATED}`);
    expect(isLink(join(s.ws, 'node_modules', '.bin', 'pkg'))).toBe(true);
  });

  // (b) PYTHONPATH
  it('D8. an .envrc with PYTHONPATH=$PWD/src: src/sitecustomize.py does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'src'), { recursive: true });
      writeFileSync(join(ws, '.envrc'), 'export PYTHONPATH=$PWD/src\n');
    });
    await runAny('D8', s, `echo 'import sys; sys.stderr.write("H114-RAN")' > src/sitecustomize.py; cp src/sitecustomize.py src/usercustomize.py; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'src', 'sitecustomize.py'))).toBe(false);
    expect(existsSync(join(s.ws, 'src', 'usercustomize.py'))).toBe(false);
  });

  it('D9. an .envrc with PYTHONPATH=$PWD/src: a stdlib module python imports at every start (src/functools.py, src/re.py, src/warnings.py) does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'src'), { recursive: true });
      writeFileSync(join(ws, '.envrc'), 'export PYTHONPATH=$PWD/src\n');
    });
    await runAny('D9', s, `for m in functools re warnings; do echo 'import sys; sys.stderr.write("H114-RAN")' > src/$m.py; done; ${UNRELATED}`);
    const landed = ['functools', 're', 'warnings'].filter((m) => existsSync(join(s.ws, 'src', `${m}.py`)));
    if (landed.length > 0) {
      const out = spawnSync('python3', ['-c', 'pass'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: join(s.ws, 'src') }, encoding: 'utf8' });
      console.log(`h114 D9 landed=${landed.join(',')}; a host 'python3 -c pass' with that PYTHONPATH wrote ${JSON.stringify(out.stderr.slice(0, 200))}`);
    }
    expect(landed).toEqual([]);
  });

  // the landings read again after a move: madeSince by birth and mtime; a folder and a file born before the plan
  it('M1. a nested repository with core.hooksPath .githooks moved (mv sub sub2), an old folder of the person\'s moved to sub2/.githooks holding an old file rewritten as a hook and back-dated: the hook does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      git(join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      mkdirSync(join(ws, 'tools'));
      writeFileSync(join(ws, 'tools', 'readme'), 'old\n');
    });
    await runAny('M1', s, `mv sub sub2; ${HOOK} > tools/readme && touch -d '2000-01-01 00:00:00' tools/readme && mv tools/readme tools/pre-commit && chmod +x tools/pre-commit && mv tools sub2/.githooks; ${UNRELATED}`);
    tree('M1', s, 'sub', 'sub2', 'tools');
    const landed = existsSync(join(s.ws, 'sub2', '.githooks', 'pre-commit')) && existsSync(join(s.ws, 'sub2', '.git', 'config'));
    expect(landed).toBe(false);
  });

  it('M2. an .envrc with PATH_add bin in sub, moved (mv sub sub2), an old folder moved to sub2/bin holding an old file rewritten as a program and back-dated: the program does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', '.envrc'), 'PATH_add bin\n');
      mkdirSync(join(ws, 'tools'));
      writeFileSync(join(ws, 'tools', 'readme'), 'old\n');
    });
    await runAny('M2', s, `mv sub sub2; ${HOOK} > tools/readme && touch -d '2000-01-01 00:00:00' tools/readme && mv tools/readme tools/git && chmod +x tools/git && mv tools sub2/bin; ${UNRELATED}`);
    tree('M2', s, 'sub', 'sub2', 'tools');
    const landed = existsSync(join(s.ws, 'sub2', 'bin', 'git')) && existsSync(join(s.ws, 'sub2', '.envrc'));
    expect(landed).toBe(false);
  });
  it('D10. the main .git writable and so movable: its config\'s core.hooksPath .githooks; the .git moved into sub (mv .git sub/.git) and an old folder, back-dated, moved to sub/.githooks: no hook lands where the moved repository runs it', async () => {
    const s = scene((ws) => {
      git(ws, 'config', 'core.hooksPath', '.githooks');
      mkdirSync(join(ws, 'sub'));
      mkdirSync(join(ws, 'tools'));
      writeFileSync(join(ws, 'tools', 'readme'), 'old\n');
    });
    await runAny('D10', s, `mv .git sub/.git; ${HOOK} > tools/readme && touch -d '2000-01-01 00:00:00' tools/readme && mv tools/readme tools/pre-commit && chmod +x tools/pre-commit && mv tools sub/.githooks; ${UNRELATED}`);
    tree('D10', s, '.git', 'sub');
    const landed = existsSync(join(s.ws, 'sub', '.githooks', 'pre-commit')) && existsSync(join(s.ws, 'sub', '.git', 'config'));
    expect(landed).toBe(false);
  });
  it('D11. control, no .envrc (the workspace under the home): a python venv\'s links and pnpm\'s node_modules/.bin link land', async () => {
    const s = scene();
    for (const rel of ['.venv/lib64', 'node_modules/.bin/pkg']) console.log(`h114 D11 ${rel}: the policy's own patterns say ${String(patternShadowedBy(s.policy, join(s.ws, rel)))}`);
    await runAny('D11', s, `mkdir -p .venv/bin .venv/lib node_modules/.bin node_modules/pkg && ln -s lib .venv/lib64 && ln -s /usr/bin/python3 .venv/bin/python && ln -s ../pkg/cli.js node_modules/.bin/pkg; ${UNRELATED}`);
    expect(isLink(join(s.ws, '.venv', 'lib64'))).toBe(true);
    expect(isLink(join(s.ws, '.venv', 'bin', 'python'))).toBe(true);
    expect(isLink(join(s.ws, 'node_modules', '.bin', 'pkg'))).toBe(true);
  });

  it('D12. an .envrc that loads .env (TOOLS_DIR=./tools) and does PATH_add $TOOLS_DIR/bin, the daemon\'s environment having its own TOOLS_DIR: a program in tools/bin does not land', async () => {
    const before = process.env.TOOLS_DIR;
    process.env.TOOLS_DIR = '/opt/daemon-tools';
    try {
      const s = scene((ws) => {
        writeFileSync(join(ws, '.env'), 'TOOLS_DIR=./tools\n');
        writeFileSync(join(ws, '.envrc'), 'dotenv\nPATH_add $TOOLS_DIR/bin\n');
      });
      await runAny('D12', s, `mkdir -p tools/bin && ${HOOK} > tools/bin/git && chmod +x tools/bin/git; ${UNRELATED}`);
      expect(existsSync(join(s.ws, 'tools', 'bin', 'git'))).toBe(false);
    } finally {
      if (before === undefined) delete process.env.TOOLS_DIR;
      else process.env.TOOLS_DIR = before;
    }
  });

  it('DA1. the workspace repository\'s alias `!cd tools/ && ./run.sh` (a folder argument ending in a slash, which the program runs from): tools/run.sh does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'config', 'alias.t', '!cd tools/ && ./run.sh');
    });
    await runAny('DA1', s, `mkdir -p tools && ${HOOK} > tools/run.sh && chmod +x tools/run.sh; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'tools/run.sh'))).toBe(false);
  });

  it('DA2. the workspace repository\'s alias `!make -C build/` (a folder argument ending in a slash, which the program runs from): build/Makefile does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'config', 'alias.b', '!make -C build/');
    });
    await runAny('DA2', s, `mkdir -p build && printf 'all:\\n\\ttouch /tmp/pwned\\n' > build/Makefile; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'build/Makefile'))).toBe(false);
  });
  it('D13. the main .git movable: its config\'s core.fsmonitor tools/fsmon.sh (protected where it is); the .git moved into sub (mv .git sub/.git) and a fresh sub/tools/fsmon.sh written: the program does not land', async () => {
    const s = scene((ws) => {
      git(ws, 'config', 'core.fsmonitor', 'tools/fsmon.sh');
      mkdirSync(join(ws, 'sub'));
    });
    await runAny('D13', s, `mv .git sub/.git && mkdir -p sub/tools && ${HOOK} > sub/tools/fsmon.sh && chmod +x sub/tools/fsmon.sh; ${UNRELATED}`);
    tree('D13', s, '.git', 'sub');
    const landed = existsSync(join(s.ws, 'sub', 'tools', 'fsmon.sh')) && existsSync(join(s.ws, 'sub', '.git', 'config'));
    expect(landed).toBe(false);
  });
});

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { patternShadowedBy, type SandboxPolicy, type SandboxRunResult } from '@aalis/api-reach';
import { afterAll, describe, expect, it } from 'vitest';
import { mainDirLandings, reachPolicyOf } from './reach-policy.testing.js';
import { makeScene, req, type Scene as BaseScene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/**
 * h114: an attack on the day's changes (b2f43f2..80c9c83) in the Linux sandbox: api-reach's
 * patternShadowedBy (a symlink where a deny pattern's matches go), removingRepository (a host
 * repository kept whole), the module search paths (PYTHONPATH protects only python's start files)
 * and the landings read again after a move. Each test asserts the safe or kind outcome; a failing
 * test is a hole or a false denial. The policy is the daemon-like one of commit-extras-attack.test.ts.
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

function scene(before?: (ws: string, home: string) => void): Scene {
  const s = makeScene();
  scenes.push(s);
  before?.(s.ws, s.home);
  return { ...s, policy: daemonPolicy(s) };
}

const sandbox = (s: BaseScene) => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') });

function say(id: string, r: SandboxRunResult): void {
  console.log(`h114 ${id}: exit=${r.exitCode} writeDenied=${String(r.writeDenied)} denied=${JSON.stringify(r.deniedWrites)} stderr=${JSON.stringify(r.stderr.slice(0, 600))}`);
}

function tree(id: string, s: BaseScene, ...rels: string[]): void {
  const out = execFileSync('sh', ['-c', 'for r in "$@"; do [ -e "$r" ] || [ -L "$r" ] && find "$r" -not -path "*/.git/hooks/*" -not -path "*/objects/*" -printf "%p(%y)%l\\n"; done; true', 'sh', ...rels], { cwd: s.ws, encoding: 'utf8' });
  console.log(`h114 ${id} after: ${out.trim().split('\n').join(' ')}`);
}

async function runAny(id: string, s: Scene, script: string): Promise<SandboxRunResult> {
  const r = await sandbox(s).run(req(s, ['sh', '-c', script], { policy: s.policy, timeoutMs: 60_000 }));
  say(id, r);
  return r;
}

const isLink = (p: string) => {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};

const HOOK = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n'";
const UNRELATED = 'echo ok > unrelated.txt';
const FLAKE = (ws: string) => {
  writeFileSync(join(ws, 'flake.nix'), '{ outputs = { self }: { }; }\n');
  writeFileSync(join(ws, '.envrc'), 'use flake\n');
};

describe('h114: the day\'s changes (Linux sandbox, overlay)', { timeout: 120_000 }, () => {
  // (c) patternShadowedBy: the flake pattern ^ws/(?:.*/)?[^/]*\.nix$ has the literal `ws/`, so every link under ws is "where its matches go"
  it('L1. a nix-flake project (use flake): a python venv\'s links (.venv/lib64 -> lib, .venv/bin/python -> /usr/bin/python3) land (no false denial)', async () => {
    const s = scene(FLAKE);
    await runAny('L1', s, `mkdir -p .venv/bin .venv/lib && ln -s lib .venv/lib64 && ln -s /usr/bin/python3 .venv/bin/python; ${UNRELATED}`);
    tree('L1', s, '.venv');
    expect(isLink(join(s.ws, '.venv', 'lib64'))).toBe(true);
    expect(isLink(join(s.ws, '.venv', 'bin', 'python'))).toBe(true);
  });

  it('L2. a nix-flake project: `nix build`\'s ./result link to the store lands (no false denial)', async () => {
    const s = scene(FLAKE);
    await runAny('L2', s, `ln -s /nix/store/0000000000000000000000000000000-hello result; ${UNRELATED}`);
    expect(isLink(join(s.ws, 'result'))).toBe(true);
  });

  it('L3. a nix-flake project: pnpm\'s node_modules/.bin link lands (no false denial)', async () => {
    const s = scene(FLAKE);
    await runAny('L3', s, `mkdir -p node_modules/.bin node_modules/pkg && echo x > node_modules/pkg/cli.js && ln -s ../pkg/cli.js node_modules/.bin/pkg; ${UNRELATED}`);
    expect(isLink(join(s.ws, 'node_modules', '.bin', 'pkg'))).toBe(true);
  });

  it('L4. control, no .envrc: the same venv and node_modules links land', async () => {
    const s = scene();
    await runAny('L4', s, `mkdir -p .venv/bin .venv/lib node_modules/.bin node_modules/pkg && ln -s lib .venv/lib64 && ln -s /usr/bin/python3 .venv/bin/python && ln -s ../pkg/cli.js node_modules/.bin/pkg; ${UNRELATED}`);
    expect(isLink(join(s.ws, '.venv', 'lib64'))).toBe(true);
    expect(isLink(join(s.ws, '.venv', 'bin', 'python'))).toBe(true);
    expect(isLink(join(s.ws, 'node_modules', '.bin', 'pkg'))).toBe(true);
  });

  it('L5. a symlink in the main repository\'s .git that git may make (none is a landing): .git/x -> ../docs lands? (logged: any link in .git is refused by the gitDirLandings pattern)', async () => {
    const s = scene();
    const r = await runAny('L5', s, `mkdir -p docs && ln -s ../docs .git/x; ${UNRELATED}`);
    console.log(`h114 L5 landed=${isLink(join(s.ws, '.git', 'x'))} writeDenied=${String(r.writeDenied)}`);
  });

  // (b) PYTHONPATH: only sitecustomize/usercustomize are protected, but a stdlib name in the path runs at every python start
  it('L6. an .envrc with PYTHONPATH=$PWD/src: src/sitecustomize.py and src/usercustomize.py do not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'src'), { recursive: true });
      writeFileSync(join(ws, '.envrc'), 'export PYTHONPATH=$PWD/src\n');
    });
    await runAny('L6', s, `echo 'import os; os.system("touch /tmp/pwned")' > src/sitecustomize.py; cp src/sitecustomize.py src/usercustomize.py; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'src', 'sitecustomize.py'))).toBe(false);
    expect(existsSync(join(s.ws, 'src', 'usercustomize.py'))).toBe(false);
  });

  it('L7. an .envrc with PYTHONPATH=$PWD/src: a stdlib module python imports at every start (src/functools.py, src/re.py, src/warnings.py) does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'src'), { recursive: true });
      writeFileSync(join(ws, '.envrc'), 'export PYTHONPATH=$PWD/src\n');
    });
    await runAny('L7', s, `for m in functools re warnings; do echo 'import sys; sys.stderr.write("H114-RAN")' > src/$m.py; done; ${UNRELATED}`);
    const landed = ['functools', 're', 'warnings'].filter((m) => existsSync(join(s.ws, 'src', `${m}.py`)));
    if (landed.length > 0) {
      const out = spawnSync('python3', ['-c', 'pass'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONPATH: join(s.ws, 'src') }, encoding: 'utf8' });
      console.log(`h114 L7 landed=${landed.join(',')}; a host 'python3 -c pass' with that PYTHONPATH wrote ${JSON.stringify(out.stderr.slice(0, 200))}`);
    }
    expect(landed).toEqual([]);
  });

  it('L8. path_add PYTHONPATH lib: a package named like a stdlib start module (lib/encodings/__init__.py) does not land', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'lib'));
      writeFileSync(join(ws, '.envrc'), 'path_add PYTHONPATH lib\n');
    });
    await runAny('L8', s, `mkdir -p lib/encodings && echo 'import os; os.system("touch /tmp/pwned")' > lib/encodings/__init__.py; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'lib', 'encodings', '__init__.py'))).toBe(false);
  });

  // (d) removingRepository
  it('R1. `rm -rf sub/.git` of a nested repository: the repository is not stripped (either gone whole or kept whole)', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      writeFileSync(join(ws, 'sub', 'a.txt'), 'a\n');
      git(home, join(ws, 'sub'), 'add', 'a.txt');
      git(home, join(ws, 'sub'), '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '-m', 'first');
    });
    const r = await runAny('R1', s, `rm -rf sub/.git; ${UNRELATED}`);
    tree('R1', s, 'sub');
    const head = existsSync(join(s.ws, 'sub', '.git', 'HEAD'));
    const objects = existsSync(join(s.ws, 'sub', '.git', 'objects'));
    const config = existsSync(join(s.ws, 'sub', '.git', 'config'));
    console.log(`h114 R1 head=${head} objects=${objects} config=${config} writeDenied=${String(r.writeDenied)}`);
    expect(head).toBe(objects);
    expect(head).toBe(config);
  });

  it('R2. the command removes the main repository\'s .git/HEAD and writes a hook and a commondir in the same run: neither lands, and its other writes do', async () => {
    const s = scene();
    await runAny('R2', s, `rm .git/HEAD; mkdir -p evil && ${HOOK} > .git/hooks/pre-commit; echo ../evil > .git/commondir; echo kept > other.txt; ${UNRELATED}`);
    expect(existsSync(join(s.ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(s.ws, '.git', 'commondir'))).toBe(false);
    expect(existsSync(join(s.ws, '.git', 'HEAD'))).toBe(true);
    expect(readFileSync(join(s.ws, 'other.txt'), 'utf8')).toBe('kept\n');
  });

  it('R3. `rm -rf sub/.git` then a new sub/.git with a config running a program (HEAD, objects, refs): the config does not land', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
    });
    await runAny('R3', s, `rm -rf sub/.git; mkdir -p sub/.git/objects sub/.git/refs && echo 'ref: refs/heads/main' > sub/.git/HEAD && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > sub/.git/config; ${UNRELATED}`);
    const cfg = existsSync(join(s.ws, 'sub', '.git', 'config')) ? readFileSync(join(s.ws, 'sub', '.git', 'config'), 'utf8') : '';
    expect(cfg).not.toContain('fsmonitor');
  });

  // the landings read again after a move: a folder that was there before, moved into the new hooks path, with a back-dated file
  it('M1. a nested repository with core.hooksPath .githooks moved (mv sub sub2), an old folder of the person\'s moved to sub2/.githooks holding an old file rewritten as a hook and back-dated: the hook does not land', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'init', '-q', 'sub');
      git(home, join(ws, 'sub'), 'config', 'core.hooksPath', '.githooks');
      mkdirSync(join(ws, 'tools'));
      writeFileSync(join(ws, 'tools', 'readme'), 'old\n');
    });
    await runAny('M1', s, `mv sub sub2; ${HOOK} > tools/readme && touch -d '2000-01-01 00:00:00' tools/readme && mv tools/readme tools/pre-commit && chmod +x tools/pre-commit && mv tools sub2/.githooks; ${UNRELATED}`);
    tree('M1', s, 'sub', 'sub2', 'tools');
    const landed = existsSync(join(s.ws, 'sub2', '.githooks', 'pre-commit')) && existsSync(join(s.ws, 'sub2', '.git', 'config'));
    expect(landed).toBe(false);
  });
  it('L9. (as docker D2) the main .git moved aside (mv .git .git-old) and a new .git with a config running a program: the config does not land, and the person\'s repository (HEAD, objects, config) is kept whole somewhere', async () => {
    const s = scene((ws, home) => {
      git(home, ws, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'x');
    });
    await runAny('L9', s, `mv .git .git-old && mkdir -p .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config; ${UNRELATED}`);
    tree('L9', s, '.git', '.git-old');
    const cfg = existsSync(join(s.ws, '.git', 'config')) ? readFileSync(join(s.ws, '.git', 'config'), 'utf8') : '';
    expect(cfg).not.toContain('fsmonitor');
    const whole = (d: string) => existsSync(join(s.ws, d, 'HEAD')) && existsSync(join(s.ws, d, 'objects')) && existsSync(join(s.ws, d, 'config'));
    expect(whole('.git') || whole('.git-old')).toBe(true);
  });
  it('L10. an .envrc that loads .env (TOOLS_DIR=./tools) and does PATH_add $TOOLS_DIR/bin, the daemon\'s environment having its own TOOLS_DIR: a program in tools/bin does not land', async () => {
    const before = process.env.TOOLS_DIR;
    process.env.TOOLS_DIR = '/opt/daemon-tools';
    try {
      const s = scene((ws) => {
        writeFileSync(join(ws, '.env'), 'TOOLS_DIR=./tools\n');
        writeFileSync(join(ws, '.envrc'), 'dotenv\nPATH_add $TOOLS_DIR/bin\n');
      });
      await runAny('L10', s, `mkdir -p tools/bin && ${HOOK} > tools/bin/git && chmod +x tools/bin/git; ${UNRELATED}`);
      expect(existsSync(join(s.ws, 'tools', 'bin', 'git'))).toBe(false);
    } finally {
      if (before === undefined) delete process.env.TOOLS_DIR;
      else process.env.TOOLS_DIR = before;
    }
  });

  it('L10b. control: the same .envrc with no TOOLS_DIR in the daemon\'s environment: a program in tools/bin does not land', async () => {
    const before = process.env.TOOLS_DIR;
    delete process.env.TOOLS_DIR;
    try {
      const s = scene((ws) => {
        writeFileSync(join(ws, '.env'), 'TOOLS_DIR=./tools\n');
        writeFileSync(join(ws, '.envrc'), 'dotenv\nPATH_add $TOOLS_DIR/bin\n');
      });
      await runAny('L10b', s, `mkdir -p tools/bin && ${HOOK} > tools/bin/git && chmod +x tools/bin/git; ${UNRELATED}`);
      expect(existsSync(join(s.ws, 'tools', 'bin', 'git'))).toBe(false);
    } finally {
      if (before !== undefined) process.env.TOOLS_DIR = before;
    }
  });
  it('L11. the workspace under the home (as a daemon has it): a python venv\'s links and pnpm\'s node_modules/.bin link land (no false denial)', async () => {
    const base = makeScene();
    scenes.push(base);
    // the scene's folder as the person's home, so the workspace lies in it
    const s: Scene = { ...base, policy: daemonPolicy(base, base.root) };
    for (const rel of ['.venv/lib64', 'node_modules/.bin/pkg']) console.log(`h114 L11 ${rel}: the policy's own patterns say ${String(patternShadowedBy(s.policy, join(s.ws, rel)))}`);
    await runAny('L11', s, `mkdir -p .venv/bin .venv/lib node_modules/.bin node_modules/pkg && ln -s lib .venv/lib64 && ln -s /usr/bin/python3 .venv/bin/python && ln -s ../pkg/cli.js node_modules/.bin/pkg; ${UNRELATED}`);
    expect(isLink(join(s.ws, '.venv', 'lib64'))).toBe(true);
    expect(isLink(join(s.ws, '.venv', 'bin', 'python'))).toBe(true);
    expect(isLink(join(s.ws, 'node_modules', '.bin', 'pkg'))).toBe(true);
  });

  it('LA1. the workspace repository\'s alias `!cd tools/ && ./run.sh` (a folder argument ending in a slash, which the program runs from): tools/run.sh does not land', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'config', 'alias.t', '!cd tools/ && ./run.sh');
    });
    await runAny('LA1', s, `mkdir -p tools && ${HOOK} > tools/run.sh && chmod +x tools/run.sh; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'tools/run.sh'))).toBe(false);
  });

  it('LA2. the workspace repository\'s alias `!make -C build/` (a folder argument ending in a slash, which the program runs from): build/Makefile does not land', async () => {
    const s = scene((ws, home) => {
      git(home, ws, 'config', 'alias.b', '!make -C build/');
    });
    await runAny('LA2', s, `mkdir -p build && printf 'all:\\n\\ttouch /tmp/pwned\\n' > build/Makefile; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'build/Makefile'))).toBe(false);
  });
});

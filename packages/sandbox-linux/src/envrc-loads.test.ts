import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

/*
 * h110 (a helper's attack on the .envrc landings; each failed before its fix): what a benign, person-written .envrc loads that the parser misses (each write below lands
 * and runs at the person's next cd), ways around the references it does find, and a false denial.
 * Real sandboxed commands, the overlay model, as envrc-landings.test.ts.
 */
let s: Scene;
beforeAll(() => {
  s = makeScene();
});
afterAll(() => execFileSync('rm', ['-rf', s.root]));

const run = (dir: string, script: string) => createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, undoneDir: join(s.root, 'undone') }).run(req(s, ['sh', '-c', script], { policy: workspacePolicy(s), cwd: dir }));
const folder = (name: string, envrc?: string, setup?: string) => {
  const d = join(s.ws, name);
  mkdirSync(d);
  if (envrc !== undefined) writeFileSync(join(d, '.envrc'), envrc);
  if (setup !== undefined) execFileSync('sh', ['-c', setup], { cwd: d });
  return d;
};
const HOOK = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n'";

describe('h110 false negatives: a benign .envrc loads what the parser misses', { timeout: 120_000 }, () => {
  it('source .venv/bin/activate puts .venv/bin first on PATH: .venv/bin/git is refused', async () => {
    const d = folder('venv', 'source .venv/bin/activate\n', 'mkdir -p .venv/bin && echo "PATH=$PWD/.venv/bin:$PATH" > .venv/bin/activate');
    const r = await run(d, `${HOOK} > .venv/bin/git; chmod +x .venv/bin/git`);
    expect(existsSync(join(d, '.venv/bin/git')), r.stderr).toBe(false);
  });

  it('layout python3 puts .direnv/python-X.Y/bin first on PATH: a command there is refused', async () => {
    const d = folder('layoutpy', 'layout python3\n', 'mkdir -p .direnv/python-3.12/bin');
    const r = await run(d, `${HOOK} > .direnv/python-3.12/bin/ls`);
    expect(existsSync(join(d, '.direnv/python-3.12/bin/ls')), r.stderr).toBe(false);
  });

  it('use flake with nix-direnv sources the cached .direnv/flake-profile-*.rc at every cd: refused', async () => {
    const d = folder('nixdirenv', 'use flake\n', 'mkdir -p .direnv && echo "export X=1" > .direnv/flake-profile-a5d5b61aa8a6.rc && echo "{ }" > flake.nix');
    const r = await run(d, 'echo "touch /tmp/pwned" >> .direnv/flake-profile-a5d5b61aa8a6.rc');
    expect(execFileSync('cat', [join(d, '.direnv/flake-profile-a5d5b61aa8a6.rc')], { encoding: 'utf8' }), r.stderr).toBe('export X=1\n');
  });

  it('if has nix; then use flake; fi (one line): flake.nix is refused', async () => {
    const d = folder('ifthen', 'if has nix; then use flake; fi\n');
    const r = await run(d, "echo '{ outputs = _: { devShells.x86_64-linux.default = { shellHook = \"touch /tmp/pwned\"; }; }; }' > flake.nix");
    expect(existsSync(join(d, 'flake.nix')), r.stderr).toBe(false);
  });

  it('PATH_add with a line continuation (PATH_add \\ newline bin): bin/git is refused', async () => {
    const d = folder('contd', 'PATH_add \\\n  bin\n');
    const r = await run(d, `mkdir -p bin && ${HOOK} > bin/git`);
    expect(existsSync(join(d, 'bin/git')), r.stderr).toBe(false);
  });

  it('use flake "git+file://$(pwd)?submodules=1" is the local flake: flake.nix is refused', async () => {
    const d = folder('gitfile', 'use flake "git+file://$(pwd)?submodules=1"\n');
    const r = await run(d, "echo '{ }' > flake.nix");
    expect(existsSync(join(d, 'flake.nix')), r.stderr).toBe(false);
  });

  it('use flake: the file flake.nix imports for its devShell (its shellHook) is refused', async () => {
    const d = folder('flakeimport', 'use flake\n', 'mkdir -p nix && echo "{ outputs = _: { devShells.x86_64-linux.default = import ./nix/devshell.nix; }; }" > flake.nix && echo "{ }" > nix/devshell.nix');
    const r = await run(d, 'echo \'{ shellHook = "touch /tmp/pwned"; }\' > nix/devshell.nix');
    expect(execFileSync('cat', [join(d, 'nix/devshell.nix')], { encoding: 'utf8' }), r.stderr).toBe('{ }\n');
  });

  it('export NODE_OPTIONS="--require $PWD/.pnp.cjs" (node loads it at every node run): refused', async () => {
    const d = folder('nodeopts', 'export NODE_OPTIONS="--require $PWD/.pnp.cjs"\n');
    const r = await run(d, "echo 'require(\"child_process\").execSync(\"touch /tmp/pwned\")' > .pnp.cjs");
    expect(existsSync(join(d, '.pnp.cjs')), r.stderr).toBe(false);
  });

  it('export KUBECONFIG=$PWD/.kube/config (an exec credential plugin runs at every kubectl): refused', async () => {
    const d = folder('kube', 'export KUBECONFIG=$PWD/.kube/config\n');
    const r = await run(d, 'mkdir -p .kube && printf "users:\\n- user:\\n    exec:\\n      command: ./x\\n" > .kube/config');
    expect(existsSync(join(d, '.kube/config')), r.stderr).toBe(false);
  });
});

describe('h110 bypasses of the references found', { timeout: 120_000 }, () => {
  it('PATH_add tools/bin: tools replaced by a symlink to a folder the command filled', async () => {
    const d = folder('swap', 'PATH_add tools/bin\n', 'mkdir -p tools/bin && echo ok > tools/bin/fmt');
    const r = await run(d, `mkdir -p evil/bin && ${HOOK} > evil/bin/git && chmod +x evil/bin/git && rm -rf tools && ln -s evil tools`);
    expect(existsSync(join(d, 'tools/bin/git')), r.stderr).toBe(false);
  });

  it('PATH_add tools/bin, tools not there yet: tools made a symlink to a folder the command filled', async () => {
    const d = folder('swap2', 'PATH_add tools/bin\n');
    const r = await run(d, `mkdir -p evil/bin && ${HOOK} > evil/bin/git && chmod +x evil/bin/git && ln -s evil tools`);
    expect(existsSync(join(d, 'tools/bin/git')), r.stderr).toBe(false);
  });

  it('PATH_add bin: a prepared folder renamed onto bin (the whole-tree rename)', async () => {
    const d = folder('rename', 'PATH_add bin\n', 'mkdir -p bin && echo ok > bin/fmt');
    const r = await run(d, `mkdir prep && ${HOOK} > prep/git && rm -rf bin && mv prep bin`);
    expect(existsSync(join(d, 'bin/git')), r.stderr).toBe(false);
  });

  it('PATH_add bin: bin itself made a symlink to a filled folder', async () => {
    const d = folder('binlink', 'PATH_add bin\n');
    const r = await run(d, `mkdir prep && ${HOOK} > prep/git && ln -s prep bin`);
    expect(existsSync(join(d, 'bin/git')), r.stderr).toBe(false);
  });
});

// `layout node` (and `PATH_add node_modules/.bin`) put node_modules/.bin on PATH; it stays the
// install's to write, as the node_modules write exception says: every `npm install` writes there,
// and the packages the links point to are writable anyway (envrcReferences leaves node_modules out)
describe('h110 false denials', { timeout: 120_000 }, () => {
  it('PATH_add node_modules/.bin (a common .envrc): an install that links node_modules/.bin is not refused', async () => {
    const d = folder('npm', 'PATH_add node_modules/.bin\n');
    const r = await run(d, 'mkdir -p node_modules/.bin node_modules/prettier && echo x > node_modules/prettier/index.js && ln -s ../prettier/index.js node_modules/.bin/prettier');
    expect(r.writeDenied, r.stderr).toBe(false);
    expect(existsSync(join(d, 'node_modules/.bin/prettier'))).toBe(true);
  });
});

describe('h110 bypasses: a rename onto the parent of a referenced folder', { timeout: 120_000 }, () => {
  it('PATH_add tools/bin, tools not there: a prepared evil/bin renamed to tools', async () => {
    const d = folder('mvparent', 'PATH_add tools/bin\n');
    const r = await run(d, `mkdir -p evil/bin && ${HOOK} > evil/bin/git && chmod +x evil/bin/git && mv evil tools`);
    expect(existsSync(join(d, 'tools/bin/git')), r.stderr).toBe(false);
  });

  it('PATH_add tools/bin, tools there: tools removed and a prepared folder renamed onto it', async () => {
    const d = folder('mvparent2', 'PATH_add tools/bin\n', 'mkdir -p tools/bin && echo ok > tools/bin/fmt');
    const r = await run(d, `mkdir -p evil/bin && ${HOOK} > evil/bin/git && chmod +x evil/bin/git && rm -rf tools && mv evil tools`);
    expect(existsSync(join(d, 'tools/bin/git')), r.stderr).toBe(false);
  });
});

describe('h110 false negatives: more stdlib and tool lines', { timeout: 120_000 }, () => {
  it.each([
    ['load_prefix .local (PATH gets .local/bin, LD_LIBRARY_PATH .local/lib)', 'lp', 'load_prefix .local\n', '.local/bin/git'],
    ['layout php (PATH_add vendor/bin)', 'lphp', 'layout php\n', 'vendor/bin/git'],
    ['layout go (PATH_add .direnv/go/bin)', 'lgo', 'layout go\n', '.direnv/go/bin/git'],
    ['eval "$(lorri direnv)" (evaluates shell.nix, its shellHook)', 'lorri', 'eval "$(lorri direnv)"\n', 'shell.nix'],
    ['{ source_env_if_exists dev.sh; } (a brace group)', 'brace', '{ source_env_if_exists dev.sh; }\n', 'dev.sh'],
  ])('%s: the write is refused', async (_what, name, envrc, target) => {
    const d = folder(`more-${name}`, envrc);
    const r = await run(d, `mkdir -p "$(dirname ${target})" && ${HOOK} > ${target}`);
    expect(existsSync(join(d, target)), r.stderr).toBe(false);
  });
});

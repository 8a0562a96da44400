import { describe, expect, it } from 'vitest';
import { envrcReferences } from './envrc-references.js';

const E = '/p/.envrc';
describe('what an .envrc makes run (direnv stdlib and the shell)', () => {
  it.each([
    ['dotenv', ['/p/.env'], []],
    ['dotenv_if_exists .env.local', ['/p/.env.local'], []],
    ['dotenv "config/dev env"', ['/p/config/dev env'], []],
    ['source_env_if_exists .envrc.private', ['/p/.envrc.private'], []],
    ['source_env ../common', ['/common'], []],
    ['source ./scripts/env.sh', ['/p/scripts/env.sh'], []],
    ['. scripts/env.sh', ['/p/scripts/env.sh'], []],
    ['PATH_add bin tools/bin', ['/p/bin', '/p/tools/bin'], []],
    // python's search path is the project's code: what python runs at every start, and the standard library's names (a pattern, below)
    ['path_add PYTHONPATH lib', ['/p/lib/sitecustomize.py', '/p/lib/usercustomize.py'], []],
    ['export NODE_PATH=$PWD/lib PERL5LIB=$PWD/perl', ['/p/lib', '/p/perl'], []],
    ['use flake', ['/p/flake.lock', '/p/.direnv'], []],
    ['use flake ./nix#dev', ['/p/nix/flake.lock', '/p/.direnv'], []],
    ['use flake path:./nix', ['/p/nix/flake.lock', '/p/.direnv'], []],
    ['use flake "git+file://$(pwd)?submodules=1"', ['/p/flake.lock', '/p/.direnv'], []],
    ['use flake github:owner/repo', [], []],
    ['use nix', ['/p/shell.nix', '/p/default.nix', '/p/.direnv'], []],
    ['use nix --pure dev.nix', ['/p/dev.nix', '/p/.direnv'], []],
    ['use devenv', ['/p/devenv.nix', '/p/devenv.yaml', '/p/devenv.local.nix', '/p/devenv.lock', '/p/.direnv'], []],
    ['eval "$(lorri direnv)"', ['/p/shell.nix', '/p/default.nix'], []],
    ['if has nix; then use nix; fi', ['/p/shell.nix', '/p/default.nix', '/p/.direnv'], []],
    ['{ source_env_if_exists dev.sh; }', ['/p/dev.sh'], []],
    ['PATH_add \\\n  bin', ['/p/bin'], []],
    ['source .venv/bin/activate', ['/p/.venv/bin/activate', '/p/.venv/bin'], []],
    ['layout python3', ['/p/.direnv'], []],
    ['layout php', ['/p/.direnv', '/p/vendor/bin'], []],
    ['layout node', ['/p/.direnv'], []],
    ['load_prefix .local', ['/p/.local/bin', '/p/.local/sbin'], []],
    ['export NODE_OPTIONS="--require $PWD/.pnp.cjs --max-old-space-size=4096"', ['/p/.pnp.cjs'], []],
    ['export KUBECONFIG=$PWD/.kube/config', ['/p/.kube/config'], []],
    ['PATH_add node_modules/.bin', [], []],
    ['export FOO=1 && dotenv', ['/p/.env'], []],
    ['watch_file x.txt # dotenv y', [], []],
    ['export PATH=$PWD/bin:$PATH', ['/p/bin'], []],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    ['export PATH="${PWD}/node_modules/.bin:tools:$PATH"', ['/p/tools'], []],
    ['PYTHONPATH=$PWD/lib dotenv', ['/p/lib/sitecustomize.py', '/p/lib/usercustomize.py', '/p/.env'], []],
    ['export FOO=$PWD/data', [], []],
    ['export PATH=$SOMEWHERE/bin:$PATH', [], ['PATH= $SOMEWHERE/bin']],
    ['dotenv "$ENV_FILE"', [], ['dotenv $ENV_FILE']],
    ['PATH_add `pwd`/bin', ['/p/bin'], []],
    ['PATH_add $(git rev-parse --show-toplevel)/bin', [], ['PATH_add $(git rev-parse --show-toplevel)/bin']],
    ['dotenv .env.*', [], ['dotenv .env.*']],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    ['PATH_add ~/bin; export PATH=${HOME}/.local/bin:$PATH', ['/h/bin', '/h/.local/bin'], []],
    // a program the .envrc runs by its path (found by an attack, h115 E1-E6)
    ['./tools/env.sh', ['/p/tools/env.sh'], []],
    ['eval "$(tools/env.sh)"', ['/p/tools/env.sh'], []],
    ['bash tools/env.sh', ['/p/tools/env.sh'], []],
    ['export FOO="$(tools/env.sh)"', ['/p/tools/env.sh'], []],
    ['source_env_if_exists .envrc.local; tools/env.sh', ['/p/.envrc.local', '/p/tools/env.sh'], []],
    ['tools/a.sh && tools/b.sh || tools/c.sh | tools/d.sh & tools/e.sh', ['/p/tools/a.sh', '/p/tools/b.sh', '/p/tools/c.sh', '/p/tools/d.sh', '/p/tools/e.sh'], []],
    ['sh -e -o pipefail tools/env.sh', ['/p/tools/env.sh'], []],
    ["bash -c 'tools/env.sh --fast'", ['/p/tools/env.sh'], []],
    ['zsh -- tools/env.sh', ['/p/tools/env.sh'], []],
    ['/bin/bash tools/env.sh; /usr/bin/env sh ./tools/b.sh', ['/bin/bash', '/p/tools/env.sh', '/p/tools/b.sh'], []],
    ['exec env A=1 ./tools/env.sh', ['/p/tools/env.sh'], []],
    ['if [ -x tools/env.sh ]; then tools/env.sh; fi', ['/p/tools/env.sh'], []],
    ['FOO=1 tools/env.sh>/dev/null', ['/p/tools/env.sh'], []],
    // after a `cd`, a relative path is another folder's: unclear
    ['(cd x && ../tools/env.sh)', ['/tools/env.sh'], ['cd x']],
    ['export A=`tools/env.sh`', ['/p/tools/env.sh'], []],
    ['export A="x # not a comment"; tools/env.sh', ['/p/tools/env.sh'], []],
    ['eval "$(direnv stdlib)"; nix develop; has go && layout go', ['/p/.direnv'], []],
    ['$TOOL setup', [], ['run $TOOL']],
    ['eval "$SETUP"', [], ['run $SETUP']],
    // bash ends a comment at its newline (found by an attack, h115 E9)
    ['# load the local settings \\\nsource_env lib.sh', ['/p/lib.sh'], []],
    ['dotenv # .env \\\nsource_env lib.sh', ['/p/.env', '/p/lib.sh'], []],
    // variables the file sets itself, from what can be told (h115 F3-F5)
    ['export VIRTUAL_ENV=$PWD/.venv\nPATH_add "$VIRTUAL_ENV/bin"', ['/p/.venv/bin'], []],
    ['export KUBECONFIG="$(expand_path .kube/config)"', ['/p/.kube/config'], []],
    ['ROOT=$(pwd)\nexport PATH="$ROOT/bin:$PATH"', ['/p/bin'], []],
    ['ROOT=`pwd`; B=$ROOT/x\n$B/setup.sh', ['/p/x/setup.sh'], []],
    ['D=$(expand_path tools)\nsource "$D/env.sh"', ['/p/tools/env.sh'], []],
    // what cannot be told stays unclear: set in a branch, after `&&`, from a program, before something that may set it unseen
    ['if has x; then ROOT=$PWD; fi\nPATH_add $ROOT/bin', [], ['PATH_add $ROOT/bin']],
    ['has x && ROOT=$PWD\nPATH_add $ROOT/bin', [], ['PATH_add $ROOT/bin']],
    ['ROOT=$(git rev-parse --show-toplevel)\nPATH_add $ROOT/bin', [], ['PATH_add $ROOT/bin']],
    ['ROOT=$PWD\ndotenv\nPATH_add $ROOT/bin', ['/p/.env'], ['PATH_add $ROOT/bin']],
    ['ROOT=$PWD\nf() { ROOT=/x; }\nPATH_add $ROOT/bin', [], ['PATH_add $ROOT/bin']],
    ['function f {\n  ROOT=$PWD\n}\nPATH_add $ROOT/bin', [], ['PATH_add $ROOT/bin']],
    ['export PATH="$ROOT/bin:$PATH"\nROOT=$PWD', [], ['PATH= $ROOT/bin']],
  ] as const)('%s', (text, paths, unresolved) => {
    const r = envrcReferences(E, text, text.includes('~/bin') ? '/h' : undefined);
    expect([...r.paths].sort()).toEqual([...paths].sort());
    // a local flake's every .nix file, which it may import
    if (text.includes('use flake') && !text.includes('github:')) expect(r.patterns.length).toBe(1);
    expect(r.unresolved).toEqual(unresolved);
  });
});

describe('a local flake\'s nix files', () => {
  it('matches every .nix file below the flake, and nothing else', () => {
    const re = new RegExp(envrcReferences(E, 'use flake').patterns[0]!);
    expect(re.test('/p/flake.nix')).toBe(true);
    expect(re.test('/p/nix/devshell.nix')).toBe(true);
    expect(re.test('/p/src/main.ts')).toBe(false);
    expect(re.test('/px/flake.nix')).toBe(false);
  });
});

describe('variables the file does not set, from the environment given', () => {
  const env = { XDG_CONFIG_HOME: '/h/.config', EMPTY: '' };
  it.each([
    ['dotenv_if_exists "$XDG_CONFIG_HOME/dev.env"', env, ['/h/.config/dev.env'], []],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    ['PATH_add ${XDG_CONFIG_HOME}/bin', env, ['/h/.config/bin'], []],
    ['dotenv_if_exists "$XDG_CONFIG_HOME/dev.env"', undefined, [], ['dotenv_if_exists $XDG_CONFIG_HOME/dev.env']],
    ['dotenv "$EMPTY/x.env"', env, [], ['dotenv $EMPTY/x.env']],
    // the file sets it: what the environment says is not what direnv will see; what the file sets is (h115 F3)
    ['export XDG_CONFIG_HOME=$PWD/cfg\ndotenv "$XDG_CONFIG_HOME/dev.env"', env, ['/p/cfg/dev.env'], []],
    ['export XDG_CONFIG_HOME=$(tool)\ndotenv "$XDG_CONFIG_HOME/dev.env"', env, [], ['dotenv $XDG_CONFIG_HOME/dev.env']],
  ] as const)('%s', (text, given, paths, unresolved) => {
    const r = envrcReferences(E, text, undefined, given);
    expect([...r.paths].sort()).toEqual([...paths].sort());
    expect(r.unresolved).toEqual(unresolved);
  });
});

describe("a folder on python's path", () => {
  it('names the standard library in it, and nothing else of the project', () => {
    const r = envrcReferences(E, 'export PYTHONPATH=$PWD/src');
    const re = new RegExp(r.patterns[0]!);
    // found by an attack (h114): these ran at a host `python3 -c pass`
    for (const p of ['/p/src/functools.py', '/p/src/re.py', '/p/src/warnings.py', '/p/src/encodings/__init__.py', '/p/src/json', '/p/src/re.cpython-311-x86_64-linux-gnu.so']) expect(re.test(p), p).toBe(true);
    for (const p of ['/p/src/app.py', '/p/src/mypkg/re.py', '/p/src/functools_extra.py', '/p/other/re.py']) expect(re.test(p), p).toBe(false);
  });
});

describe('what the environment given says, until something may set a variable unseen', () => {
  const env = { TOOLS_DIR: '/elsewhere' };
  it.each([
    // found by an attack (h114): a `.env` set TOOLS_DIR; the daemon's own was not what direnv saw
    ['dotenv\nPATH_add $TOOLS_DIR/bin', ['/p/.env'], ['PATH_add $TOOLS_DIR/bin']],
    ['PATH_add $TOOLS_DIR/bin\ndotenv', ['/elsewhere/bin', '/p/.env'], []],
    ['dotenv_if_exists "$TOOLS_DIR/dev.env"', ['/elsewhere/dev.env'], []],
    ['my_direnvrc_function\nPATH_add $TOOLS_DIR/bin', [], ['PATH_add $TOOLS_DIR/bin']],
  ] as const)('%s', (text, paths, unresolved) => {
    const r = envrcReferences(E, text, undefined, env);
    expect([...r.paths].sort()).toEqual([...paths].sort());
    expect(r.unresolved).toEqual(unresolved);
  });
});

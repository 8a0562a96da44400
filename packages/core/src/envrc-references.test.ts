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
    ['path_add PYTHONPATH lib', ['/p/lib'], []],
    ['use flake', ['/p/flake.nix', '/p/flake.lock'], []],
    ['use flake ./nix#dev', ['/p/nix/flake.nix', '/p/nix/flake.lock'], []],
    ['use flake path:./nix', ['/p/nix/flake.nix', '/p/nix/flake.lock'], []],
    ['use flake github:owner/repo', [], []],
    ['use nix', ['/p/shell.nix', '/p/default.nix'], []],
    ['use nix --pure dev.nix', ['/p/dev.nix'], []],
    ['use devenv', ['/p/devenv.nix', '/p/devenv.yaml', '/p/devenv.local.nix', '/p/devenv.lock'], []],
    ['export FOO=1 && dotenv', ['/p/.env'], []],
    ['layout python3; watch_file x.txt # dotenv y', [], []],
    ['export PATH=$PWD/bin:$PATH', ['/p/bin'], []],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    ['export PATH="${PWD}/node_modules/.bin:tools:$PATH"', ['/p/node_modules/.bin', '/p/tools'], []],
    ['PYTHONPATH=$PWD/lib dotenv', ['/p/lib', '/p/.env'], []],
    ['export FOO=$PWD/data', [], []],
    ['export PATH=$HOME/bin:$PATH', [], ['PATH= $HOME/bin']],
    ['dotenv "$ENV_FILE"', [], ['dotenv $ENV_FILE']],
    ['PATH_add `pwd`/bin', [], ['PATH_add `pwd`/bin']],
    ['dotenv .env.*', [], ['dotenv .env.*']],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, not a template
    ['PATH_add ~/bin; export PATH=${HOME}/.local/bin:$PATH', ['/h/bin', '/h/.local/bin'], []],
  ] as const)('%s', (text, paths, unresolved) => {
    const r = envrcReferences(E, text, text.includes('~/bin') ? '/h' : undefined);
    expect([...r.paths].sort()).toEqual([...paths].sort());
    expect(r.unresolved).toEqual(unresolved);
  });
});

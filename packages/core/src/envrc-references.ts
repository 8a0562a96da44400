import { dirname, isAbsolute, join, resolve } from 'node:path';

/*
 * direnv runs a folder's `.envrc` at every `cd` into it (once the person allowed that file's
 * content), and what the `.envrc` loads runs with it: the `.env` its `dotenv` exports into the
 * shell (`PATH`, `PROMPT_COMMAND`, `BASH_ENV`), the files `source_env` and `source` run, the
 * folders `PATH_add` puts first on PATH, the Nix files `use flake` and `use nix` evaluate (their
 * `shellHook` runs). direnv's allowance covers the `.envrc` alone, so a change of any of those
 * runs at the next `cd` or prompt, unasked. `.envrc` is a landing; what it names is one by
 * reference, as a folder `core.hooksPath` names is.
 */

/** What an `.envrc` makes run when direnv loads it: files (exactly) and folders (with what is under them), as absolute paths. */
export interface EnvrcReferences {
  readonly paths: readonly string[];
  /** Arguments it could not tell (a variable, a command substitution, a glob): the caller protects the folder whole. */
  readonly unresolved: readonly string[];
}

/** The most of an `.envrc` read: direnv files are a few lines; a longer one is judged by what was read and said unresolved. */
export const ENVRC_MAX_BYTES = 64 * 1024;

const SPLIT = /;|&&|\|\||\|/;

/** Shell words of one command (single and double quotes taken off; no expansion: `$`, backticks and globs stay in the word). */
function words(command: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote === undefined && /\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
      continue;
    }
    word ??= '';
    if (c === quote) quote = undefined;
    else if (quote === undefined && (c === '"' || c === "'")) quote = c;
    else if (c === '\\' && quote !== "'" && i + 1 < command.length) word += command[++i];
    else word += c;
  }
  if (word !== undefined) out.push(word);
  return out;
}

const unclear = (word: string) => /[$`*?[\]{}~]/.test(word) || word === '';

/** Variables whose value names where a program loads code from (search paths, preloads, start files). */
const LOAD_VARS = new Set(['PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'BASH_ENV', 'ENV', 'PERL5LIB', 'RUBYLIB', 'NODE_PATH']);

/**
 * The files and folders an `.envrc` at `envrc` (its text `text`) makes run, by direnv's stdlib and
 * the shell's own `source`: `dotenv` and `dotenv_if_exists` (default `.env`), `source_env` and
 * `source_env_if_exists` (a file, or a folder's `.envrc`: the path whole), `source` and `.`,
 * `PATH_add` and `path_add` (folders), `use flake` (a local flake's folder: `flake.nix`,
 * `flake.lock`), `use nix` (its `.nix` arguments, else `shell.nix` and `default.nix`), `use devenv`
 * (`devenv.nix`, `devenv.yaml`, `devenv.local.nix`, `devenv.lock`), and the entries of the
 * variables programs load code from (`PATH`, `PYTHONPATH`, `LD_PRELOAD`, `BASH_ENV`, …, with
 * `$PWD` taken as the folder, `~` and `$HOME` as `home` when given). Relative paths are the
 * `.envrc`'s folder's, as direnv runs it there.
 */
export function envrcReferences(envrc: string, text: string, home?: string): EnvrcReferences {
  const dir = dirname(envrc);
  const at = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(dir, p));
  const paths = new Set<string>();
  const unresolved: string[] = [];
  const add = (given: string, command: string) => {
    // the home as the shell expands it, when the caller knows it (`PATH_add ~/bin`, `$HOME/.local/bin`)
    const word = home === undefined ? given : given.replace(/^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/, home);
    if (unclear(word)) unresolved.push(`${command} ${given}`.trim());
    else paths.add(at(word));
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '');
    for (const part of line.split(SPLIT)) {
      const w = words(part.trim());
      // `export PATH=$PWD/bin:$PATH` (or without export): each entry of a variable programs load
      // code from is a folder (or file) the next `cd` puts there
      for (const word of w[0] === 'export' ? w.slice(1) : w) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(word);
        if (m === null) break;
        if (!LOAD_VARS.has(m[1]!)) continue;
        for (const entry of m[2]!.split(':')) {
          if (entry === '' || /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(entry)) continue; // `$PATH` itself: nothing of the folder's
          const inFolder = /^(?:\$PWD|\$\{PWD\}|\$\(pwd\))(\/.*)?$/.exec(entry);
          if (inFolder !== null) add(`.${inFolder[1] ?? ''}`, `${m[1]}=`);
          else add(entry, `${m[1]}=`);
        }
      }
      // `export X=1 && dotenv`: the command is the first word that is no assignment
      while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w.shift();
      const [command, ...args] = w;
      if (command === undefined) continue;
      const flagless = args.filter((a) => !a.startsWith('-'));
      switch (command) {
        case 'dotenv':
        case 'dotenv_if_exists':
          add(flagless[0] ?? '.env', command);
          break;
        case 'source_env':
        case 'source_env_if_exists':
        case 'source':
        case '.':
          if (flagless[0] !== undefined) add(flagless[0], command);
          break;
        case 'PATH_add':
          for (const a of flagless) add(a, command);
          break;
        case 'path_add':
          for (const a of flagless.slice(1)) add(a, command);
          break;
        case 'use': {
          const [what, ...rest] = flagless;
          if (what === 'flake') {
            const ref = rest[0] ?? '.';
            // a local flake (a path, or path:…): its folder's flake files; a remote one runs nothing of the workspace
            const local = ref.startsWith('path:') ? ref.slice(5) : /^[a-z+]+:/.test(ref) ? undefined : ref;
            if (local === undefined) break;
            const folder = local.split('#')[0] || '.';
            if (unclear(folder)) unresolved.push(`use flake ${ref}`);
            else for (const f of ['flake.nix', 'flake.lock']) paths.add(join(at(folder), f));
          } else if (what === 'nix') {
            const files = rest.filter((a) => a.endsWith('.nix'));
            for (const f of files.length > 0 ? files : ['shell.nix', 'default.nix']) add(f, 'use nix');
          } else if (what === 'devenv') {
            for (const f of ['devenv.nix', 'devenv.yaml', 'devenv.local.nix', 'devenv.lock']) paths.add(at(f));
          }
          break;
        }
        default:
          break;
      }
    }
  }
  return { paths: [...paths], unresolved };
}

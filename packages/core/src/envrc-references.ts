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
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(command); m !== null; m = re.exec(command)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

const unclear = (word: string) => /[$`*?[\]{}~]/.test(word) || word === '';

/**
 * The files and folders an `.envrc` at `envrc` (its text `text`) makes run, by direnv's stdlib and
 * the shell's own `source`: `dotenv` and `dotenv_if_exists` (default `.env`), `source_env` and
 * `source_env_if_exists` (a file, or a folder's `.envrc`: the path whole), `source` and `.`,
 * `PATH_add` and `path_add` (folders), `use flake` (a local flake's folder: `flake.nix`,
 * `flake.lock`), `use nix` (its `.nix` arguments, else `shell.nix` and `default.nix`), `use devenv`
 * (`devenv.nix`, `devenv.yaml`, `devenv.local.nix`, `devenv.lock`). Relative paths are the
 * `.envrc`'s folder's, as direnv runs it there.
 */
export function envrcReferences(envrc: string, text: string): EnvrcReferences {
  const dir = dirname(envrc);
  const at = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(dir, p));
  const paths = new Set<string>();
  const unresolved: string[] = [];
  const add = (word: string, command: string) => {
    if (unclear(word)) unresolved.push(`${command} ${word}`.trim());
    else paths.add(at(word));
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '');
    for (const part of line.split(SPLIT)) {
      const w = words(part.trim());
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

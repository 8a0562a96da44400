import { dirname, isAbsolute, join, resolve } from 'node:path';
import { PYTHON_STDLIB_NAMES } from './python-stdlib-names.js';

/*
 * direnv runs a folder's `.envrc` at every `cd` into it (once the person allowed that file's
 * content), and what the `.envrc` loads runs with it: the `.env` its `dotenv` exports into the
 * shell (`PATH`, `PROMPT_COMMAND`, `BASH_ENV`), the files `source_env` and `source` run, the
 * folders `PATH_add` puts first on PATH, the Nix files `use flake` and `use nix` evaluate (their
 * `shellHook` runs). direnv's allowance covers the `.envrc` alone, so a change of any of those
 * runs at the next `cd` or prompt, unasked. `.envrc` is a landing; what it names is one by
 * reference, as a folder `core.hooksPath` names is.
 */

/** What an `.envrc` makes run when direnv loads it, as absolute paths. */
export interface EnvrcReferences {
  /** Files (exactly) and folders (with what is under them). */
  readonly paths: readonly string[];
  /** Whole-path patterns (a local flake's `.nix` files, which it may import from anywhere in its folder). */
  readonly patterns: readonly string[];
  /** Arguments it could not tell (a variable, a command substitution, a glob): the caller protects the folder whole. */
  readonly unresolved: readonly string[];
}

/** The most of an `.envrc` read: direnv files are a few lines; a longer one is judged by what was read and said unresolved. */
export const ENVRC_MAX_BYTES = 64 * 1024;

const SPLIT = /;|&&|\|\||\|/;

/** Words that open or close a shell construct before a command (`if has nix; then use flake; fi`, `{ dotenv; }`). */
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!', '{', '}', '(', ')', 'export']);

/** Shell words of one command (single and double quotes taken off; no expansion: `$`, backticks and globs stay in the word). */
function words(command: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  // inside `$( … )` or backticks a space does not end the word: a command substitution is one (unclear) word
  let depth = 0;
  let tick = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote !== "'") {
      if (c === '$' && command[i + 1] === '(') depth += 1;
      else if (c === ')' && depth > 0) depth -= 1;
      else if (c === '`') tick = !tick;
    }
    if (quote === undefined && depth === 0 && !tick && /\s/.test(c)) {
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
const escaped = (text: string) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/**
 * Variables whose value names where a program loads code or its configuration from: search
 * paths, preloads, start files, and configs that name programs (kubectl's exec plugins, git's and
 * AWS's global config, docker's credential helpers, npm's user config, cargo's home).
 */
const LOAD_VARS = new Set(['PATH', 'PYTHONSTARTUP', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'BASH_ENV', 'ENV', 'PERL5LIB', 'RUBYLIB', 'NODE_PATH', 'KUBECONFIG', 'GIT_CONFIG_GLOBAL', 'AWS_CONFIG_FILE', 'DOCKER_CONFIG', 'NPM_CONFIG_USERCONFIG', 'CARGO_HOME']);

/**
 * Python's search path: code there runs when a program imports it by name, as the project's own
 * code does (`PYTHONPATH=$PWD/src` is the project's source: protecting it whole refused every edit
 * of it, found by an attack, h112). What runs without being asked for is a landing: the start
 * files python runs at every start, and a file or package named as a standard-library module,
 * which comes first (h114). Perl's, ruby's and node's paths are protected whole, as before.
 */
const PYTHON_PATH_VARS = new Set(['PYTHONPATH']);
const PYTHON_STARTS = ['sitecustomize.py', 'usercustomize.py'];
const stdlibNames = () => PYTHON_STDLIB_NAMES.map((n) => escaped(n)).join('|');

/**
 * direnv's and the shell's commands known to set no variable the `.envrc`'s own text does not
 * show; any other (a `dotenv`, a sourced file, a layout, a function the person's direnvrc defines)
 * may.
 */
const SETS_NOTHING_UNSEEN = new Set(['PATH_add', 'path_add', 'MANPATH_add', 'watch_file', 'watch_dir', 'log_status', 'log_error', 'has', 'echo', 'printf', 'true', 'false', 'test', '[', 'strict_env', 'unstrict_env', 'env_vars_required', 'direnv_version', 'unset']);

/** Node's options that load a file at every start (`NODE_OPTIONS="--require ./.pnp.cjs"`). */
const NODE_LOADS = new Set(['--require', '-r', '--import', '--loader', '--experimental-loader']);

/** The folders `layout <kind>` (direnv's stdlib) puts first on PATH, relative to the `.envrc`'s folder: `.direnv/…` is covered whole. */
const LAYOUT_BINS: Record<string, readonly string[]> = { node: [], php: ['vendor/bin'], uv: ['.venv/bin'] };

/**
 * The files and folders an `.envrc` at `envrc` (its text `text`) makes run, by direnv's stdlib and
 * the shell's own `source`: `dotenv` and `dotenv_if_exists` (default `.env`), `source_env` and
 * `source_env_if_exists` (a file, or a folder's `.envrc`: the path whole), `source` and `.` (a
 * virtualenv's `bin/activate` with its `bin/`), `PATH_add` and `path_add` (folders), `load_prefix`
 * (its `bin/` and `sbin/`), `layout` (direnv's own `.direnv/`, `vendor/bin`, `.venv/bin`), `use
 * flake` (a local flake's folder: `flake.nix`, `flake.lock` and every `.nix` file in it, which it
 * may import), `use nix` (its `.nix` arguments, else `shell.nix` and `default.nix`) and lorri,
 * `use devenv`, direnv's `.direnv/` (nix-direnv sources its cached profile there at every `cd`),
 * and the entries of the variables programs load code from (`PATH`, `LD_PRELOAD`, `KUBECONFIG`,
 * `NODE_OPTIONS`'s `--require`, …; of `PYTHONPATH` the start files python runs and the standard
 * library's names, by a pattern; `$PWD` taken
 * as the folder, `~` and `$HOME` as `home` when given, another variable as `env` has it when the
 * file does not set it). Relative paths are the `.envrc`'s folder's, as direnv runs it there. What
 * lies in a `node_modules` folder is left out: installs write there (the node_modules write
 * exception), and a `PATH_add node_modules/.bin` made every `npm install` refused.
 */
export function envrcReferences(envrc: string, text: string, home?: string, env?: Readonly<Record<string, string | undefined>>): EnvrcReferences {
  const dir = dirname(envrc);
  const at = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(dir, p));
  const paths = new Set<string>();
  const patterns = new Set<string>();
  const unresolved: string[] = [];
  const inFolder = (word: string) => word.replace(/^(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=\/|$)/, '.');
  // a variable the file never sets, set in `env` (the daemon's): as the person's shell would have it
  // (an .envrc above the workspace loading `$XDG_CONFIG_HOME/dev.env` protected the whole home,
  // workspace and all, found by an attack, h112); one the file sets, or `env` lacks, stays unclear
  const assigned = new Set([...text.matchAll(/(?:^|[\s;&|(])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=/g)].map((m) => m[1]!));
  // once something has run that may set variables the text does not show (a `dotenv`, a sourced
  // file, a layout), the environment given no longer says what they are (found by an attack, h114:
  // a `.env` set TOOLS_DIR, the daemon had its own, and `PATH_add $TOOLS_DIR/bin` was read as that)
  let setsUnseen = false;
  const expanded = (word: string) =>
    env === undefined || setsUnseen ? word : word.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (all, a?: string, b?: string) => {
      const name = (a ?? b)!;
      const value = assigned.has(name) ? undefined : env[name];
      return value === undefined || value === '' ? all : value;
    });
  /** `given` as direnv would resolve it, or undefined (said in `unresolved`) when it cannot be told. */
  const resolved = (given: string, command: string): string | undefined => {
    // the home as the shell expands it, when the caller knows it (`PATH_add ~/bin`, `$HOME/.local/bin`)
    const word = expanded(inFolder(home === undefined ? given : given.replace(/^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/, home)));
    if (!unclear(word)) return at(word);
    unresolved.push(`${command} ${given}`.trim());
    return undefined;
  };
  const add = (given: string, command: string) => {
    const path = resolved(given, command);
    if (path !== undefined) paths.add(path);
  };
  /** A folder on python's path: its start files and the standard library's names in it. */
  const pythonPath = (given: string, command: string) => {
    const dir = resolved(given, command);
    if (dir === undefined) return;
    for (const start of PYTHON_STARTS) paths.add(join(dir, start));
    patterns.add(`^${escaped(dir)}/(?:${stdlibNames()})(?:\\.[^/]*|/.*)?$`);
  };
  const direnvDir = () => paths.add(at('.direnv'));
  const nixFiles = (folder: string) => {
    patterns.add(`^${escaped(at(folder))}/(?:.*/)?[^/]*\\.nix$`);
    paths.add(join(at(folder), 'flake.lock'));
    direnvDir();
  };
  // a line ending in a backslash goes on in the next
  for (const raw of text.replace(/\\\n/g, ' ').split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '');
    if (/\blorri\b/.test(line)) for (const f of ['shell.nix', 'default.nix']) add(f, 'lorri');
    for (const part of line.split(SPLIT)) {
      const w = words(part.trim());
      while (w.length > 0 && KEYWORDS.has(w[0]!)) w.shift();
      // `PATH=$PWD/bin:$PATH` (exported or not): each entry of a variable programs load code from
      for (const word of w) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(word);
        if (m === null) break;
        if (m[1] === 'NODE_OPTIONS') {
          const opts = m[2]!.split(/\s+/);
          opts.forEach((o, i) => {
            const eq = /^(--[a-z-]+)=(.+)$/.exec(o);
            if (eq !== null && NODE_LOADS.has(eq[1]!)) add(eq[2]!, 'NODE_OPTIONS');
            else if (NODE_LOADS.has(o) && opts[i + 1] !== undefined) add(opts[i + 1]!, 'NODE_OPTIONS');
          });
          continue;
        }
        const python = PYTHON_PATH_VARS.has(m[1]!);
        if (!LOAD_VARS.has(m[1]!) && !python) continue;
        for (const entry of m[2]!.split(':')) {
          if (entry === '' || /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(entry) && !/^\$\{?(?:PWD|HOME)\}?$/.test(entry)) continue; // `$PATH` itself: nothing of the folder's
          if (python) pythonPath(entry, `${m[1]}=`);
          else add(entry, `${m[1]}=`);
        }
      }
      // `FOO=1 dotenv`: the command is the first word that is no assignment
      while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w.shift();
      const [command, ...args] = w;
      if (command === undefined) continue;
      const flagless = args.filter((a) => !a.startsWith('-'));
      // its own arguments are expanded before it runs: what it may set counts from the next command
      const settingUnseen = !SETS_NOTHING_UNSEEN.has(command);
      switch (command) {
        case 'dotenv':
        case 'dotenv_if_exists':
          add(flagless[0] ?? '.env', command);
          break;
        case 'source_env':
        case 'source_env_if_exists':
          if (flagless[0] !== undefined) add(flagless[0], command);
          break;
        case 'source':
        case '.':
          if (flagless[0] !== undefined) {
            add(flagless[0], command);
            // a virtualenv's activate puts its folder first on PATH
            if (/(?:^|\/)activate(?:\.[a-z]+)?$/.test(flagless[0])) add(dirname(flagless[0]), command);
          }
          break;
        case 'PATH_add':
          for (const a of flagless) add(a, command);
          break;
        case 'path_add': {
          const python = PYTHON_PATH_VARS.has(flagless[0] ?? '');
          for (const a of flagless.slice(1)) {
            if (python) pythonPath(a, command);
            else add(a, command);
          }
          break;
        }
        case 'load_prefix':
          for (const a of flagless) for (const sub of ['bin', 'sbin']) add(`${a}/${sub}`, command);
          break;
        case 'layout':
          direnvDir();
          for (const bin of LAYOUT_BINS[flagless[0] ?? ''] ?? []) add(bin, command);
          break;
        case 'use': {
          const [what, ...rest] = flagless;
          if (what === 'flake') {
            // a local flake (a path, path:…, git+file:…, file:…): its folder's nix files; a remote one runs nothing of the workspace
            const ref = inFolder((rest[0] ?? '.').replace(/^(?:path:|git\+file:(?:\/\/)?|file:(?:\/\/)?)/, '')).replace(/^\$\(pwd\)|^\$PWD|^\$\{PWD\}/, '.');
            if (/^[a-z][a-z0-9+.-]*:/.test(ref)) break;
            const folder = ref.split(/[?#]/)[0] || '.';
            if (unclear(folder)) unresolved.push(`use flake ${rest[0]}`);
            else nixFiles(folder);
          } else if (what === 'nix') {
            const files = rest.filter((a) => a.endsWith('.nix'));
            for (const f of files.length > 0 ? files : ['shell.nix', 'default.nix']) add(f, 'use nix');
            direnvDir();
          } else if (what === 'devenv') {
            for (const f of ['devenv.nix', 'devenv.yaml', 'devenv.local.nix', 'devenv.lock']) paths.add(at(f));
            direnvDir();
          }
          break;
        }
        default:
          break;
      }
      if (settingUnseen) setsUnseen = true;
    }
  }
  const outsideNodeModules = (p: string) => !/(?:^|\/)node_modules(?:\/|$)/.test(p);
  return { paths: [...paths].filter(outsideNodeModules), patterns: [...patterns], unresolved };
}

import { escapePattern } from './pattern-escape.js';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
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
  /** Whole-path patterns no write exception may lift (the commands a person types, in a `node_modules/.bin` on PATH). */
  readonly strictPatterns?: readonly string[];
}

/** The most of an `.envrc` read: direnv files are a few lines; a longer one is judged by what was read and said unresolved. */
export const ENVRC_MAX_BYTES = 64 * 1024;

/**
 * The text bash reads, comments taken off and `\`-newlines joined, in one pass as bash reads it: a
 * comment ends at its newline whatever its last character (found by an attack, h115 E9: a comment
 * line ending in `\` was joined to the next line first, and that line's `source_env lib.sh` was lost
 * in the comment). A `#` starts a comment at the start of a word, outside quotes.
 */
function logicalText(text: string): string {
  let out = '';
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      out += c;
    } else if (c === '\\') {
      if (text[i + 1] === '\n') i++; // a continuation: bash takes both away
      else {
        out += c + (text[i + 1] ?? '');
        i++;
      }
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      out += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      out += c;
    } else if (c === '#' && (out === '' || /[\s;&|()]$/.test(out))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else out += c;
  }
  return out;
}

/** One command of a shell text; `joined`: it follows `&&`, `||`, `|` or `&` (it may not run, or runs in a subshell). */
interface Command {
  readonly text: string;
  readonly joined: boolean;
}

/**
 * The commands of a shell text: split at newlines, `;`, `&`, `&&`, `||`, `|`, `(` and `)` outside
 * quotes and substitutions; the text of every `$(…)` and backtick substitution (a command run in a
 * subshell: `eval "$(tools/env.sh)"`, `export FOO="$(tools/env.sh)"`, found by an attack, h115 E2,
 * E4) is `inner`'s.
 */
function commands(text: string, inner: string[]): Command[] {
  const out: Command[] = [];
  let current = '';
  let joined = false;
  const end = (by: string) => {
    const had = current.trim() !== '';
    if (had) out.push({ text: current.trim(), joined });
    current = '';
    if (by === '(' || by === ')') out.push({ text: by, joined });
    // `a &&` then a newline: what follows still runs only if `a` did
    if (by === '&' || by === '|') joined = true;
    else if ((by === '\n' || by === ';') && had) joined = false;
  };
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      current += c;
      continue;
    }
    if (c === '\\') {
      current += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if ((c === '$' && text[i + 1] === '(') || c === '`') {
      const open = c === '`' ? 1 : 2;
      let j = i + open;
      if (c === '`') {
        while (j < text.length && text[j] !== '`') j += text[j] === '\\' ? 2 : 1;
      } else {
        let depth = 1;
        let q: '"' | "'" | undefined;
        for (; j < text.length; j++) {
          const d = text[j]!;
          if (d === '\\' && q !== "'") j++;
          else if (q !== undefined) {
            if (d === q) q = undefined;
          } else if (d === '"' || d === "'") q = d;
          else if (d === '(') depth++;
          else if (d === ')' && --depth === 0) break;
        }
      }
      const body = text.slice(i + open, j);
      // arithmetic `$((…))` runs nothing
      if (!(c === '$' && body.startsWith('(') && body.endsWith(')'))) inner.push(body);
      current += text.slice(i, j + 1);
      i = j;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      current += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      current += c;
      continue;
    }
    if (/[\n;&|()]/.test(c)) {
      end(c);
      continue;
    }
    current += c;
  }
  end('\n');
  return out;
}

/** Words that open or close a shell construct before a command (`if has nix; then use flake; fi`, `{ dotenv; }`). */
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!', '{', '}', '(', ')', 'export']);

/** Words that run the command after them (`exec ./tools/env.sh`, `env FOO=1 tools/env.sh`): the command is the next word. */
const RUNS_NEXT = new Set(['exec', 'command', 'builtin', 'nohup', 'time', 'env', 'nice', 'sudo', 'doas', 'timeout', 'xargs', 'direnv', 'stdbuf', 'setsid', 'chrt', 'ionice']);

/** Shells whose first argument (no option) is a script they run (`bash tools/env.sh`, h115 E3); `-c` runs its argument as text. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh']);

/** Interpreters that run the script named by their first argument that is no option. */
const INTERPRETERS = new Set(['python', 'python2', 'python3', 'node', 'nodejs', 'perl', 'ruby', 'php', 'lua', 'Rscript', 'tsx', 'ts-node']);
/** Options after which an interpreter runs inline code or a module, no script of the folder's. */
const INLINE_CODE = new Set(['-c', '-e', '-m', '-E', '--eval', '-p', '--print', '-r', '--require', '--version', '-V', '--help', '-h']);
/** A wrapper's flags that take an argument (not the command it runs). */
const FLAG_TAKES_ARG: Readonly<Record<string, readonly string[]>> = { exec: ['-a'], sudo: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U'], doas: ['-u', '-C'], timeout: ['-s', '-k', '--signal', '--kill-after'], nice: ['-n'], env: ['-u', '-C', '-S'], xargs: ['-I', '-n', '-P', '-L', '-d', '-E', '-s', '-a'] };
/** Variables whose value a program runs as a command. */
const COMMAND_VARS = new Set(['PROMPT_COMMAND', 'GIT_SSH_COMMAND', 'GIT_SSH', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'PAGER', 'GIT_PAGER', 'MANPAGER', 'RUSTC_WRAPPER', 'RUSTC', 'SSH_ASKPASS', 'GIT_ASKPASS', 'SUDO_ASKPASS', 'BROWSER', 'SHELL', 'TERMINAL']);

/** Words that declare variables (their flags aside): what follows are assignments. */
const DECLARES = new Set(['local', 'declare', 'typeset', 'readonly']);

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
    if (quote === undefined && depth === 0 && !tick && /[\s<>]/.test(c)) {
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
const LOAD_VARS = new Set(['LD_AUDIT', 'GIT_EXEC_PATH', 'PATH', 'PYTHONSTARTUP', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'BASH_ENV', 'ENV', 'PERL5LIB', 'RUBYLIB', 'NODE_PATH', 'KUBECONFIG', 'GIT_CONFIG_GLOBAL', 'AWS_CONFIG_FILE', 'DOCKER_CONFIG', 'NPM_CONFIG_USERCONFIG', 'CARGO_HOME']);

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
 *
 * Beyond the stdlib, every program the file runs by its path (found by an attack, h115 E1–E6): a
 * command word that is a path (`./tools/env.sh`, `tools/env.sh` after `;`, `&&`, `||`, `|`), the
 * script a shell runs (`bash tools/env.sh`; `bash -c '…'` and `eval …` read as commands), and
 * what `$(…)` and backticks run; a command word that cannot be told (`$TOOL`), or a `cd` (relative
 * paths after it are another folder's), is said unresolved. A bare name (`nix`, `layout`) is looked
 * up on PATH. Variables the file sets itself at its top level, from what can be told (a literal,
 * `$PWD`, `$(pwd)`, `$(expand_path x)`, the home, another such variable), are read as set (h115
 * F3–F5); one set in a branch, a function, after `&&`, or before something that may set it unseen,
 * stays unclear.
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
  // the file's own variables, set at its top level from what can be told (a literal, `$PWD`,
  // `$(pwd)`, `$(expand_path x)`, the home, another such variable): `export VIRTUAL_ENV=$PWD/.venv`
  // then `PATH_add "$VIRTUAL_ENV/bin"`, `ROOT=$(pwd)` (found by an attack, h115 F3–F5: read as
  // unclear, they protected the whole folder). One set otherwise (in a branch, a function, after
  // `&&`, from what cannot be told) stays unclear, as does every one once something may set
  // variables unseen.
  const known = new Map<string, string>();
  /** `word` with what the shell would expand in it that can be told here; the rest left as written. */
  const expanded = (word: string) => {
    let out = home === undefined ? word : word.replace(/^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/, home);
    out = out.replace(/\$\(\s*pwd\s*\)|`\s*pwd\s*`|\$\{PWD\}|\$PWD(?![A-Za-z0-9_])/g, () => dir);
    // direnv's `expand_path <path>`: the path from the `.envrc`'s folder, made absolute
    out = out.replace(/\$\(\s*expand_path\s+([^\s$`()*?[\]{}~]+)\s*\)|`\s*expand_path\s+([^\s$`()*?[\]{}~]+)\s*`/g, (_all, a?: string, b?: string) => at((a ?? b)!));
    return out.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (all, a?: string, b?: string) => {
      const name = (a ?? b)!;
      const value = known.get(name) ?? (assigned.has(name) || env === undefined || setsUnseen ? undefined : env[name]);
      return value === undefined || value === '' ? all : value;
    });
  };
  /** `given` as direnv would resolve it, or undefined (said in `unresolved`) when it cannot be told. */
  const resolved = (given: string, command: string): string | undefined => {
    // the home as the shell expands it, when the caller knows it (`PATH_add ~/bin`, `$HOME/.local/bin`)
    const word = expanded(given);
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
  // how deep in a branch, loop, group, subshell or function body the command is: a variable set there may not be set
  let depth = 0;
  let cases = 0;
  /** The commands of `script`; `nested`: run in a subshell (a substitution, `bash -c`), which sets nothing here. */
  const run = (script: string, nested: boolean, level: number): void => {
    if (level > 8) {
      unresolved.push('(nested too deep)');
      return;
    }
    const inner: string[] = [];
    for (const { text: part, joined } of commands(script, inner)) {
      if (nested) {
        // a subshell's text: what it runs, not what it sets
      } else if (part === '(') {
        depth += 1;
        continue;
      } else if (part === ')') {
        if (cases === 0) depth = Math.max(0, depth - 1);
        continue;
      }
      if (/\blorri\b/.test(part)) for (const f of ['shell.nix', 'default.nix']) add(f, 'lorri');
      const w = words(part);
      while (w.length > 0 && KEYWORDS.has(w[0]!)) {
        const k = w.shift()!;
        if (nested) continue;
        if (k === 'if' || k === 'while' || k === 'until' || k === '{') depth += 1;
        else if (k === 'fi' || k === 'done' || k === '}') depth = Math.max(0, depth - 1);
      }
      // `function f {`: its body is a function's, as `f() {` (its `{` counts too: deeper, never shallower)
      if (!nested && (w[0] === 'case' || w[0] === 'for' || w[0] === 'select' || w[0] === 'function')) {
        depth += 1;
        if (w[0] === 'case') cases += 1;
      } else if (!nested && w[0] === 'esac') {
        depth = Math.max(0, depth - 1);
        cases = Math.max(0, cases - 1);
      }
      // `local X=…`, `declare -x PATH=…`: assignments after its flags
      if (w.length > 0 && DECLARES.has(w[0]!)) {
        w.shift();
        while (w.length > 0 && w[0]!.startsWith('-')) w.shift();
      }
      // `FOO=1 dotenv`: the command is the first word that is no assignment
      const assignments: string[] = [];
      while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) assignments.push(w.shift()!);
      // a variable the file sets (an assignment alone on its line, at the top level): its value, when it can be told
      if (!nested && w.length === 0) {
        for (const word of assignments) {
          const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(word)!;
          const value = expanded(m[2]!);
          if (depth === 0 && !joined && !unclear(value) || depth === 0 && !joined && value === '') known.set(m[1]!, value);
          else known.delete(m[1]!);
        }
      }
      // `PATH=$PWD/bin:$PATH` (exported or not): each entry of a variable programs load code from
      for (const word of assignments) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(word)!;
        if (m[1] === 'NODE_OPTIONS') {
          const opts = m[2]!.split(/\s+/);
          opts.forEach((o, i) => {
            const eq = /^(--[a-z-]+)=(.+)$/.exec(o);
            if (eq !== null && NODE_LOADS.has(eq[1]!)) add(eq[2]!, 'NODE_OPTIONS');
            else if (NODE_LOADS.has(o) && opts[i + 1] !== undefined) add(opts[i + 1]!, 'NODE_OPTIONS');
          });
          continue;
        }
        // a variable whose value a program runs as a command (`EDITOR=tools/x`, `PROMPT_COMMAND`,
        // `GIT_SSH_COMMAND`): read as a command (found by an attack, h119 P4)
        if (COMMAND_VARS.has(m[1]!)) {
          run(m[2]!, true, level + 1);
          continue;
        }
        const python = PYTHON_PATH_VARS.has(m[1]!);
        if (!LOAD_VARS.has(m[1]!) && !python) continue;
        for (const entry of m[2]!.split(':')) {
          // `$PATH` itself, or a variable the file does not set: nothing of the folder's (one it sets, `$ROOT/bin`, is read)
          const bare = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(entry)?.[1];
          if (entry === '' || bare !== undefined && bare !== 'PWD' && bare !== 'HOME' && (bare === m[1] || !assigned.has(bare))) continue;
          if (python) pythonPath(entry, `${m[1]}=`);
          else add(entry, `${m[1]}=`);
        }
      }
      // `exec ./tools/env.sh`, `env FOO=1 tools/env.sh`: the command is the one they run
      while (w.length > 1 && RUNS_NEXT.has(basename(w[0]!))) {
        const wrapper = basename(w.shift()!);
        while (w.length > 1 && (w[0]!.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!))) {
          // `exec -a name cmd`, `sudo -u user cmd`: the flag's own argument is no command (h119 P2)
          const flag = w.shift()!;
          if (w.length > 1 && FLAG_TAKES_ARG[wrapper]?.includes(flag)) w.shift();
        }
        // `timeout 5 cmd`, `direnv exec . cmd`: what comes before the command (h119 P2)
        if (wrapper === 'timeout' && w.length > 1 && /^[\d.]+[smhd]?$/.test(w[0]!)) w.shift();
        if (wrapper === 'direnv' && w[0] === 'exec' && w.length > 2) w.splice(0, 2);
      }
      // `nix develop -c cmd`, `nix-shell --run 'cmd'`: the command it runs (h119 P2)
      const nixRun = (w[0] === 'nix' || w[0] === 'nix-shell') ? w.findIndex((a) => a === '-c' || a === '--command' || a === '--run') : -1;
      if (nixRun > 0 && w[nixRun + 1] !== undefined) run(w.slice(nixRun + 1).join(' '), true, level + 1);
      // direnv's stdlib by its functions' own names: `use_nix` is `use nix`, `layout_python3` `layout python3` (h119 P3)
      const fn = /^(use|layout)_([A-Za-z0-9_-]+)$/.exec(w[0] ?? '');
      if (fn !== null) w.splice(0, 1, fn[1]!, fn[2]!);
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
        case 'cd':
        case 'pushd':
        case 'popd':
          // relative paths after it are another folder's: what they name cannot be told here
          unresolved.push([command, ...args].join(' '));
          break;
        case 'eval': {
          // `eval "$(tool)"`: what the tool prints, the tool read above (its substitution); other text is read as commands
          const rest = args.filter((a) => !/^(?:\$\([\s\S]*\)|`[^`]*`)$/.test(a));
          if (rest.length > 0) run(rest.join(' '), nested, level + 1);
          break;
        }
        default:
          if (INTERPRETERS.has(basename(command))) {
            // `python3 tools/env.py`, `node tools/env.js`: the script it runs; inline code (`-c`, `-e`, `-m`) names none (h119 P1)
            for (const a of args) {
              if (INLINE_CODE.has(a)) break;
              if (a.startsWith('-')) continue;
              add(a, command);
              break;
            }
          } else if (SHELLS.has(basename(command))) {
            // `bash tools/env.sh`, `bash -c 'tools/env.sh'`
            for (let i = 0; i < args.length; i++) {
              const a = args[i]!;
              if (/^-[A-Za-z]*c[A-Za-z]*$/.test(a)) {
                if (args[i + 1] !== undefined) run(args[i + 1]!, true, level + 1);
                break;
              }
              if (a === '-o' || a === '+o' || a === '-O' || a === '+O') i++;
              else if (a === '--') {
                if (args[i + 1] !== undefined) add(args[i + 1]!, command);
                break;
              } else if (!a.startsWith('-') && !a.startsWith('+')) {
                add(a, command);
                break;
              }
            }
          }
          break;
      }
      // a program run by its path (`./tools/env.sh`, `tools/env.sh`, `$ROOT/bin/setup`; found by an
      // attack, h115 E1, E5): what it is runs at every load; a bare name (`nix`, `layout`) is looked up on PATH
      if (command.includes('/') || /[$`]/.test(command)) add(command, 'run');
      if (settingUnseen && !nested) {
        setsUnseen = true;
        known.clear();
      }
    }
    // what `$(…)` and backticks run (`eval "$(tools/env.sh)"`, `FOO="$(tools/env.sh)"`: h115 E2, E4)
    for (const body of inner) run(body, true, level + 1);
  };
  run(logicalText(text), false, 0);
  const outsideNodeModules = (p: string) => !/(?:^|\/)node_modules(?:\/|$)/.test(p);
  // a program folder on PATH inside node_modules stays the installs', but not under the names the
  // person types: a `node_modules/.bin/git` ran at their next `git` (found by an attack, h115 E7)
  const strictPatterns = [...paths].filter((p) => !outsideNodeModules(p) && /\/\.?bin$/.test(p)).map((p) => `^${escapePattern(p)}/(?:${SHADOWED_COMMANDS.map(escapePattern).join('|')})$`);
  return { paths: [...paths].filter(outsideNodeModules), patterns: [...patterns], unresolved, ...(strictPatterns.length > 0 ? { strictPatterns } : {}) };
}

/**
 * The commands a person types that no package's `bin` is named after: in a program folder on PATH
 * that installs write (`node_modules/.bin`), these names are landings (a planted `git` there runs
 * at the person's next `git`), the others the installs'.
 */
export const SHADOWED_COMMANDS = [
  'git', 'ssh', 'scp', 'sftp', 'sudo', 'su', 'doas', 'ls', 'cat', 'cp', 'mv', 'rm', 'mkdir', 'chmod', 'chown', 'ln',
  'grep', 'sed', 'awk', 'find', 'xargs', 'sort', 'head', 'tail', 'less', 'more', 'curl', 'wget', 'make', 'cc', 'gcc',
  'clang', 'ld', 'docker', 'podman', 'kubectl', 'helm', 'terraform', 'aws', 'gcloud', 'az', 'gh', 'bash', 'sh', 'zsh',
  'fish', 'dash', 'env', 'python', 'python3', 'pip', 'pip3', 'ruby', 'gem', 'perl', 'go', 'cargo', 'rustc', 'java',
  'gpg', 'gpg2', 'openssl', 'tar', 'gzip', 'unzip', 'zip', 'vi', 'vim', 'nvim', 'nano', 'emacs', 'code', 'man', 'ps',
  'kill', 'top', 'htop', 'direnv', 'nix', 'systemctl', 'journalctl', 'apt', 'apt-get', 'brew', 'tmux', 'screen',
] as const;

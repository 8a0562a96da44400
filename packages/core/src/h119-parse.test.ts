import { describe, expect, it } from 'vitest';
import { envrcReferences } from './envrc-references.js';
import { gitConfigProgramWords, parseGitConfig } from './git-config.js';

/*
 * h119: what an `.envrc` line or a git config value runs that the parsers still do not name (a
 * workspace file a command can write and the host then runs), and everyday idioms they must not
 * deny. `it.fails` marks a finding: the assertion says what should hold.
 */

const E = '/p/.envrc';
const refs = (text: string) => envrcReferences(E, text, '/h', {});
const words = (config: string) => gitConfigProgramWords(parseGitConfig(config));

describe('h119: .envrc programs run through an interpreter or a wrapper', () => {
  /*
   * FINDING P1: a script run by an interpreter other than sh/bash/zsh/dash/ksh is not named.
   * `python3 tools/env.py` (and `node tools/env.js`, `eval "$(python3 tools/env.py)"`) gives no
   * path, no unresolved: the command's edit of tools/env.py lands, and direnv runs it at the next
   * `cd`. At fault: envrc-references.ts envrcReferences (SHELLS covers shells only; a command word
   * with no slash is taken as a name looked up on PATH and its arguments are not looked at).
   */
  it.each([
    ['python3 tools/env.py', '/p/tools/env.py'],
    ['node tools/env.js', '/p/tools/env.js'],
    ['eval "$(python3 tools/env.py)"', '/p/tools/env.py'],
    ['perl tools/env.pl', '/p/tools/env.pl'],
  ])('P1. %s names %s (or is unresolved)', (text, path) => {
    const r = refs(text);
    expect(r.paths.includes(path) || r.unresolved.length > 0).toBe(true);
  });

  /*
   * FINDING P2: wrappers that run their argument as a program are missing from RUNS_NEXT:
   * `timeout 5 tools/env.sh`, `sudo tools/env.sh`, `xargs tools/env.sh`, `nix develop -c
   * tools/env.sh`, `direnv exec . tools/env.sh`, and `exec -a name tools/env.sh` (exec's `-a`
   * takes an argument, dropped as a flag, so `name` is taken for the command). No path, no unresolved.
   */
  it.each([
    ['timeout 5 tools/env.sh'],
    ['sudo tools/env.sh'],
    ['xargs tools/env.sh < /dev/null'],
    ['nix develop -c tools/env.sh'],
    ['direnv exec . tools/env.sh'],
    ['exec -a x tools/env.sh'],
  ])('P2. %s names tools/env.sh (or is unresolved)', (text) => {
    const r = refs(text);
    expect(r.paths.includes('/p/tools/env.sh') || r.unresolved.length > 0).toBe(true);
  });

  /*
   * FINDING P3: direnv's stdlib functions called by their own names (`use` is `use_$1`):
   * `use_flake`, `use_nix`, `use_devenv`, `layout_python3` (`layout` is `layout_$1`) name nothing, where `use flake` / `use nix` / `use
   * devenv` name flake.nix's folder, shell.nix/default.nix, devenv.nix and .direnv.
   */
  it.each([
    ['use_nix', '/p/shell.nix'],
    ['use_flake', '/p/flake.lock'],
    ['use_devenv', '/p/devenv.nix'],
    ['layout_python3', '/p/.direnv'],
  ])('P3. %s names %s as its spaced form does', (text, path) => {
    expect(refs(text).paths).toContain(path);
  });

  /*
   * FINDING P4: variables whose value the shell or a tool runs as a program are not among
   * LOAD_VARS: `PROMPT_COMMAND` (bash runs it at every prompt, exported into the person's shell by
   * direnv), `GIT_SSH_COMMAND`, `EDITOR`, `PAGER`, `RUSTC_WRAPPER`, `LD_AUDIT` (as LD_PRELOAD),
   * `GIT_EXEC_PATH` (git's own programs). `export X=tools/x` names nothing.
   */
  it.each([
    ['PROMPT_COMMAND'],
    ['GIT_SSH_COMMAND'],
    ['EDITOR'],
    ['PAGER'],
    ['RUSTC_WRAPPER'],
    ['LD_AUDIT'],
    ['GIT_EXEC_PATH'],
  ])('P4. export %s=tools/x names tools/x', (name) => {
    expect(refs(`export ${name}=tools/x`).paths).toContain('/p/tools/x');
  });

  // held: the idioms the brief names are not denied (no unresolved, so the folder is not protected whole)
  it.each([
    ['layout python', ['/p/.direnv']],
    ['use node', []],
    ['dotenv_if_exists', ['/p/.env']],
    ['export PATH=$PWD/node_modules/.bin:$PATH', []],
    ['source .venv/bin/activate', ['/p/.venv/bin/activate', '/p/.venv/bin']],
    ['[[ -f .env.local ]] && dotenv .env.local', ['/p/.env.local']],
    ['watch_file package.json', []],
    ['x=tools; source $x/env.sh', ['/p/tools/env.sh']],
    ['f() { tools/env.sh; }; f', ['/p/tools/env.sh']],
    ['source <(tools/env.sh)', ['/p/tools/env.sh']],
  ])('held: %s names %j and nothing unresolved', (text, paths) => {
    const r = refs(text);
    expect(r.unresolved).toEqual([]);
    expect([...r.paths].sort()).toEqual([...paths].sort());
  });

  /*
   * FINDING P5 (false denial): `export PATH="$(git rev-parse --show-toplevel)/bin:$PATH"` is
   * unresolved, so landing-extras.ts envrcRules protects the .envrc's folder whole (every write of a
   * command in that project refused). For an .envrc at a repository's top it is `$PWD/bin`.
   * (The substitution of git-config.ts's isTop is not read by envrc-references.ts's expanded.)
   */
  it.fails('P5. PATH="$(git rev-parse --show-toplevel)/bin:$PATH" at a repository top is not unresolved', () => {
    expect(refs('export PATH="$(git rev-parse --show-toplevel)/bin:$PATH"').unresolved).toEqual([]);
  });
});

describe('h119: everyday .envrc idioms read as unresolved (the folder protected whole)', () => {
  /*
   * FINDING P6 (false denial): `export $(grep -v '^#' .env | xargs)` and `export $(cat .env |
   * xargs)` (the usual way to load a .env without direnv's `dotenv`) are unresolved (`run
   * $(…)`: the substitution is taken for a command word), so landing-extras.ts envrcRules protects
   * the .envrc's folder whole. What the line loads is the .env (a landing already, ENV_FILES); the
   * substitution's own commands (grep, cat, xargs) are bare names. At fault: envrc-references.ts
   * envrcReferences (`export` dropped as a keyword, then the `$(…)` word is the command, added as
   * `run` and unclear). Also unresolved, less common: `export PATH=$(npm bin):$PATH`, `PATH_add
   * $(go env GOPATH)/bin` (a folder outside the workspace).
   */
  it.fails.each([
    ["export $(grep -v '^#' .env | xargs)"],
    ['export $(cat .env | xargs)'],
  ])('P6. %s is not unresolved', (text) => {
    expect(refs(text).unresolved).toEqual([]);
  });
});

describe('h119: git programs named without a slash, or by shell syntax the split misses', () => {
  /*
   * FINDING G1: a script given to an interpreter by a bare name: `alias.st = !python3 st.py`,
   * `!sh st.sh`, `core.fsmonitor = python3 fsmon.py`, `filter.x.clean = python3 clean.py`. git
   * runs an alias (and a filter) from the worktree's top, so the interpreter runs the top's st.py
   * (checked on this machine: `git a3` with `a3 = !python3 st.py` ran ./st.py, from a subfolder too).
   * gitConfigProgramWords gives []: a command's st.py lands, and the person's `git st` runs it.
   * At fault: git-config.ts programWords (a word without a slash is skipped as a PATH name, even
   * as the argument of an interpreter).
   */
  it.each([
    ['[alias]\n\tst = !python3 st.py', 'st.py'],
    ['[alias]\n\tst = !sh st.sh', 'st.sh'],
    ['[alias]\n\tst = !cd sub && sh st.sh', 'st.sh'],
    ['[core]\n\tfsmonitor = python3 fsmon.py', 'fsmon.py'],
    ['[filter "x"]\n\tclean = python3 clean.py', 'clean.py'],
  ])('G1. %j names %s (or the top)', (config, word) => {
    const w = words(config);
    expect(w.some((x) => x === word || x.endsWith(`/${word}`) || x === '.')).toBe(true);
  });

  /*
   * FINDING G2: a backslash-newline in an alias (`st = "!tools/\\\nst.sh"` in the file: the value
   * `!tools/\` newline `st.sh`) is a line continuation to sh, which runs tools/st.sh (checked:
   * `git a1` printed the script's output). shellWords keeps the newline in the word: the word is
   * `tools/\nst.sh`, and tools/st.sh is not protected. At fault: git-config.ts shellWords (`\`
   * followed by a newline appends the newline instead of dropping both).
   */
  it('G2. an alias whose path is split by a backslash-newline names the joined path', () => {
    expect(words('[alias]\n\tst = "!tools/\\\\\\nst.sh"')).toContain('tools/st.sh');
  });

  /*
   * G3 (minor, where sh is bash: Fedora, Arch, macOS; here sh is dash): `!$'tools/st.sh'` (ANSI-C
   * quoting) gives the word `$tools/st.sh`, not dynamic, so tools/st.sh is not named and the top is
   * not protected. At fault: shellWords (a `$` before a quote is kept as text).
   */
  it("G3. !$'tools/st.sh' names tools/st.sh or the top", () => {
    const w = words("[alias]\n\tst = !$'tools/st.sh'");
    expect(w.includes('tools/st.sh') || w.includes('.')).toBe(true);
  });

  /*
   * FINDING G4: `!cd tools && ./run.sh` (the usual form, no trailing slash) names only `./run.sh`,
   * which is resolved from the top (top/run.sh), while sh runs tools/run.sh: tools/ is not
   * protected. The h114 rule (a folder after `cd`, `-C`, `--prefix` holds what runs) applies only
   * to a word ending in `/`: programWords skips a word without a slash before looking at RUN_IN.
   * The same for `make -C build` and `npm --prefix web run x` (nothing named).
   */
  it.each([
    ['[alias]\n\tst = !cd tools && ./run.sh', 'tools'],
    ['[alias]\n\tst = !make -C build', 'build'],
  ])('G4. %j names %s (the folder it runs in)', (config, folder) => {
    const w = words(config);
    expect(w.some((x) => x === folder || x === `${folder}/` || x.startsWith(`${folder}/`) || x === '.')).toBe(true);
  });

  /*
   * FINDING G5: `!cd "$GIT_PREFIX" && ./run.sh` (git's documented way for an alias to run where the
   * person is) names `./run.sh` at the top only; it runs the run.sh of whatever subfolder the person
   * is in. A `cd` to an expansion should make what follows unclear (the top protected whole, `.`).
   */
  it('G5. !cd "$GIT_PREFIX" && ./run.sh protects the top whole', () => {
    expect(words('[alias]\n\tst = !cd "$GIT_PREFIX" && ./run.sh')).toContain('.');
  });

  // held: everyday aliases name nothing of the workspace
  it.each([
    ['[alias]\n\tlg = !git log --oneline | head'],
    ['[alias]\n\tst = !npx eslint .'],
    ['[core]\n\tpager = less -R'],
    ['[alias]\n\tst = !f() { git log "$@"; }; f'],
  ])('held: %j names nothing', (config) => {
    expect(words(config)).toEqual([]);
  });
});

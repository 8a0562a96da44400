import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { AalisError } from './aalis-error.js';
import { decodeHostText, hostPathArg } from './host-names.js';
import { readRegularSync } from './read-regular-sync.js';
import { shownText } from './well-formed.js';

/**
 * A file git reads as configuration that cannot be read as one (a FIFO, a device, past the
 * bound): what it says (where git runs hooks from) cannot be judged, so the caller refuses.
 */
export class GitConfigUnreadableError extends AalisError<'git-config-unreadable'> {
  override readonly name = 'GitConfigUnreadableError';
  constructor(
    readonly file: string,
    message: string,
    fix: string,
  ) {
    super('git-config-unreadable', message, { fix });
  }
}

/** One `section[.subsection].key` of a git config file, names folded as git folds them. */
export interface GitConfigEntry {
  readonly section: string;
  readonly subsection: string | undefined;
  readonly key: string;
  readonly value: string | undefined;
}

/** A value's text: quotes removed, escapes read, an unquoted comment cut, outer blanks trimmed. */
function valueText(raw: string): string {
  let out = '';
  let quoted = false;
  let pendingBlank = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      const n = raw[++i];
      out += pendingBlank + (n === 'n' ? '\n' : n === 't' ? '\t' : n === 'b' ? '\b' : (n ?? ''));
      pendingBlank = '';
    } else if (c === '"') {
      quoted = !quoted;
      out += pendingBlank;
      pendingBlank = '';
    } else if (!quoted && (c === '#' || c === ';')) {
      break;
    } else if (!quoted && (c === ' ' || c === '\t')) {
      if (out.length > 0) pendingBlank += c;
    } else {
      out += pendingBlank + c;
      pendingBlank = '';
    }
  }
  return out;
}

/**
 * Whether a line of git config goes on in the next: it ends in a backslash that is no escape and
 * lies outside a comment. git ends a comment (`#` or `;` outside quotes, or a line that starts with
 * one) at the newline, whatever its last character: a comment line ending in `\` followed by
 * `hooksPath = hk` is read by git as core.hooksPath = hk (found by an attack, h115 V3: the two lines
 * were joined first, and the hooksPath line was lost in the comment).
 */
function continues(line: string): boolean {
  let i = 0;
  while (line[i] === ' ' || line[i] === '\t') i++;
  if (line[i] === '[') {
    // a section header, its subsection quoted with escapes
    let quoted = false;
    for (i++; i < line.length; i++) {
      const c = line[i]!;
      if (c === '\\') i++;
      else if (c === '"') quoted = !quoted;
      else if (c === ']' && !quoted) break;
    }
    i++;
  }
  let quoted = false;
  for (; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\') {
      if (i === line.length - 1) return true;
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';')) return false;
  }
  return false;
}

/** The entries of a git config text, in order (a line ending in `\` outside a comment continues on the next). */
export function parseGitConfig(text: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  let section = '';
  let subsection: string | undefined;
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    while (continues(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i];
    let rest = line.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(rest);
    if (header) {
      const name = header[1]!;
      const dot = name.indexOf('.');
      section = (dot < 0 ? name : name.slice(0, dot)).toLowerCase();
      subsection = header[2] !== undefined ? header[2].replace(/\\(.)/g, '$1') : dot < 0 ? undefined : name.slice(dot + 1).toLowerCase();
      rest = rest.slice(header[0].length).trim();
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(rest);
    if (kv && section !== '') entries.push({ section, subsection, key: kv[1]!.toLowerCase(), value: kv[2] === undefined ? undefined : valueText(kv[2]) });
  }
  return entries;
}

/** `~/…` and `~` as the home; anything else as it is. */
export function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  // `~alice/hooks` is alice's home, as git reads it (found by an attack, h106: taken as a relative
  // name, the folder it names was not protected); a user this machine does not know stays as written
  const other = /^~([^/]+)(\/.*)?$/.exec(path);
  const theirs = other === null ? undefined : homeOfUser(other[1]!);
  return theirs === undefined ? path : join(theirs, other?.[2] ?? '');
}

/** A local user's home, from the password file; undefined when there is no such user or no file to read. */
function homeOfUser(name: string): string | undefined {
  const read = readRegularSync('/etc/passwd', { maxBytes: 16 * 1024 * 1024, follow: true });
  if (read.kind !== 'read') return undefined;
  for (const line of read.bytes.toString('utf8').split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields.length >= 7 && fields[5]!.startsWith('/')) return fields[5];
  }
  return undefined;
}

/** The most of one git config file read; git's own are a few kilobytes. */
const GIT_CONFIG_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Every value of `section.key` (no subsection) in a config file and the files it includes
 * (`include.path` and every `includeIf.*.path`, taken whatever their condition: a landing too
 * many is safer than one missed), in the order git reads them. Files missing or closed to the
 * daemon are skipped; one that is not a regular file (a FIFO, a device) or is too large throws a
 * {@link GitConfigUnreadableError}; includes deeper than git's own limit (10) are not followed.
 * Every file an include names (found or not) is added to `included`, when given.
 */
export function gitConfigValues(file: string, section: string, key: string, home: string, depth = 0, included?: Set<string>): string[] {
  return gitConfigEntries(file, home, depth, included).flatMap((e) => (e.value !== undefined && e.section === section && e.subsection === undefined && e.key === key ? [e.value] : []));
}

/** Every entry of a config file and the files it includes, in the order git reads them (see {@link gitConfigValues}). */
export function gitConfigEntries(file: string, home: string, depth = 0, included?: Set<string>): GitConfigEntry[] {
  // read without waiting: an included path may name a FIFO (a file a command may make), which a
  // read by path waited on for good, on the daemon's thread. What git would read but this cannot
  // (a FIFO a process feeds, a device, a file past the bound) may name a hooks directory: refused,
  // not skipped. A file missing or closed to the daemon is skipped, as before.
  const read = readRegularSync(hostPathArg(file), { maxBytes: GIT_CONFIG_MAX_BYTES, follow: true });
  if (read.kind === 'refused') {
    throw new GitConfigUnreadableError(
      file,
      `git reads ${shownText(file)} as configuration, and ${read.why}: where git runs hooks from (core.hooksPath) cannot be judged without reading it, so this call was refused; nothing was run.`,
      `Make ${shownText(file)} a regular file of git configuration, or remove it (or the include that names it).`,
    );
  }
  if (read.kind !== 'read') return [];
  const out: GitConfigEntry[] = [];
  // bytes that are not UTF-8 kept (decodeHostText): a value names a path by its bytes
  for (const e of parseGitConfig(decodeHostText(read.bytes))) {
    out.push(e);
    if (e.value !== undefined && e.key === 'path' && (e.section === 'include' || e.section === 'includeif') && depth < 10) {
      const expanded = expandHome(e.value, home);
      const target = isAbsolute(expanded) ? expanded : resolve(dirname(file), expanded);
      included?.add(target);
      out.push(...gitConfigEntries(target, home, depth + 1, included));
    }
  }
  return out;
}

/** The keys whose value git runs as a program (`section.key`, `section.*.key` with a subsection). */
const PROGRAM_KEYS = new Set([
  'core.fsmonitor',
  'core.editor',
  'core.pager',
  'core.sshcommand',
  'core.askpass',
  'sequence.editor',
  'credential.helper',
  'credential.*.helper',
  'filter.*.clean',
  'filter.*.smudge',
  'filter.*.process',
  'diff.external',
  'diff.*.textconv',
  'diff.*.command',
  'merge.*.driver',
  'gpg.program',
  'gpg.*.program',
  'uploadpack.packobjectshook',
  'alias.*',
  // found by an attack (h108): keys git also runs, missing here, let a command write their program
  'core.gitproxy',
  'core.alternaterefscommand',
  'interactive.difffilter',
  'remote.*.uploadpack',
  'remote.*.receivepack',
  'gpg.*.defaultkeycommand',
  'trailer.*.command',
  'trailer.*.cmd',
  'mergetool.*.cmd',
  'mergetool.*.path',
  'difftool.*.cmd',
  'difftool.*.path',
  'sendemail.sendmailcmd',
  'sendemail.smtpserver',
  'sendemail.tocmd',
  'sendemail.cccmd',
  'sendemail.headercmd',
  'imap.tunnel',
  'browser.*.cmd',
  'browser.*.path',
  'man.*.cmd',
  'man.*.path',
  'submodule.*.update',
]);

/** The words after which a folder is where the program runs (and finds what it runs): `cd`, `make -C`, `npm --prefix`, … */
const RUN_IN = new Set(['cd', 'pushd', '-C', '--prefix', '--cwd', '--dir', '--directory', '--chdir', '--cd']);

/**
 * The programs a config's entries name by path, where git runs them (`core.fsmonitor =
 * ~/bin/watch.sh`, `credential.helper = /opt/x/helper`, `filter.lfs.process = tools/lfs …`, an
 * alias `!scripts/x.sh`): each word of a value that is a path (absolute, `~/`, or with a `/`:
 * then from `top`, where git runs), options and addresses aside. A bare name is looked up on PATH
 * (`git-credential-<name>` for a helper).
 */
export function gitConfigProgramPaths(entries: readonly GitConfigEntry[], home: string, top: string): string[] {
  return [
    ...new Set(
      gitConfigProgramWords(entries).map((word) => {
        const expanded = expandHome(word, home);
        return isAbsolute(expanded) ? resolve(expanded) : resolve(top, expanded);
      }),
    ),
  ];
}

/** The word that stands for the repository's top: a program git runs that cannot be told protects the repository whole. */
const TOP = '.';

/** Shell words that run their argument as shell text (`sh -c '…'`, `eval "…"`). */
const RUNS_TEXT = new Set(['-c', 'eval']);

/** Programs that run the script named in their first argument: a bare name there is a file of the top's. */
const INTERPRETERS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'python', 'python2', 'python3', 'node', 'nodejs', 'perl', 'ruby', 'php', 'lua', 'tclsh', 'Rscript', 'tsx', 'ts-node']);

/** `$(git rev-parse --show-toplevel)`, `$(pwd)`, `` `pwd` ``, `$PWD`: git runs an alias (and the programs it names) from the top. */
const isTop = (inner: string) => /^\s*(?:git\s+rev-parse\s+--show-toplevel|pwd)\s*$/.test(inner);

interface ShellWord {
  /** The word, quotes and escapes taken off; a substitution that names the top made `.`. */
  readonly text: string;
  /** It holds an expansion that cannot be told (`$VAR`, `$(…)`, backticks). */
  readonly dynamic: boolean;
  /** It is a redirection's target (`>/dev/null`): written or read, not run. */
  readonly redirected: boolean;
  /** The first word of a command after `;`, `&&`, `|`, `(`, `{`, …: the word before it is none. */
  readonly first: boolean;
}

/**
 * The words of a shell command text (what git hands to `sh -c`), split at blanks and at the
 * shell's metacharacters (`;`, `&`, `|`, `<`, `>`, `(`, `)`, `{`, `}`, newlines) outside quotes, so
 * that a path glued to them (`f() { tools/st.sh; }; f`, `tools/st.sh>/dev/null`) is a word of its
 * own (found by an attack, h115 G1–G3). The text of every `$(…)` and backtick substitution is
 * `inner`'s, to be read as commands too.
 */
function shellWords(text: string, inner: string[]): ShellWord[] {
  const out: ShellWord[] = [];
  let word: string | undefined;
  let dynamic = false;
  let redirect = false;
  let first = true;
  let quote: '"' | "'" | undefined;
  const end = () => {
    if (word !== undefined) {
      out.push({ text: word, dynamic, redirected: redirect, first });
      first = false;
      redirect = false;
    }
    word = undefined;
    dynamic = false;
  };
  /** The text of a `$(…)` from `i` (just past its `(`), and where it ends. */
  const substitution = (i: number): [string, number] => {
    let depth = 1;
    let q: '"' | "'" | undefined;
    let j = i;
    for (; j < text.length; j++) {
      const c = text[j]!;
      if (c === '\\' && q !== "'") j++;
      else if (q !== undefined) {
        if (c === q) q = undefined;
      } else if (c === '"' || c === "'") q = c;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) break;
    }
    return [text.slice(i, j), j];
  };
  /** A `$(…)` or backquoted command: run (into `inner`), and the word the top when it names it, else what cannot be told. */
  const substituted = (body: string) => {
    inner.push(body);
    if ((word === undefined || word === '') && isTop(body)) word = TOP;
    else {
      word = (word ?? '') + '$';
      dynamic = true;
    }
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (c === '\\') {
      // a backslash-newline joins the lines, as sh reads it (`tools/\` newline `st.sh` runs
      // tools/st.sh: found by an attack, h119 G2)
      if (text[i + 1] !== '\n') word = (word ?? '') + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '$' && text[i + 1] === "'") {
      // ANSI-C quoting (`$'tools/st.sh'` where sh is bash): read as what cannot be told, the top whole (h119 G3)
      const j = text.indexOf("'", i + 2);
      word = `${word ?? ''}$/${text.slice(i + 2, j < 0 ? text.length : j)}`;
      dynamic = true;
      i = j < 0 ? text.length : j;
      continue;
    }
    if (c === '$' && text[i + 1] === '(') {
      const [body, j] = substitution(i + 2);
      i = j;
      if (body.startsWith('(')) {
        // arithmetic `$((…))`: a number
        word = (word ?? '') + '0';
        continue;
      }
      substituted(body);
      continue;
    }
    if (c === '`') {
      const j = text.indexOf('`', i + 1);
      substituted(text.slice(i + 1, j < 0 ? text.length : j));
      i = j < 0 ? text.length : j;
      continue;
    }
    if (c === '$' && /[A-Za-z_{0-9@*#?!$-]/.test(text[i + 1] ?? '')) {
      const m = /^\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?!$-])/.exec(text.slice(i))!;
      i += m[0].length - 1;
      if ((word === undefined || word === '') && /^\$\{?PWD\}?$/.test(m[0])) word = TOP;
      // the home, as `~` (expanded by the caller)
      else if ((word === undefined || word === '') && /^\$\{?HOME\}?$/.test(m[0])) word = '~';
      else {
        word = (word ?? '') + '$';
        dynamic = true;
      }
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
      continue;
    }
    if (/[\s;&|<>(){}]/.test(c)) {
      const wasRedirect = c === '<' || c === '>';
      end();
      if (wasRedirect) redirect = true;
      else if (!/[ \t]/.test(c)) first = true;
      continue;
    }
    word = (word ?? '') + c;
  }
  end();
  return out;
}

/** The program path words of a shell command text, into `out` (see {@link gitConfigProgramWords}). */
function programWords(text: string, out: Set<string>, depth: number): void {
  if (depth > 8) {
    out.add(TOP);
    return;
  }
  const inner: string[] = [];
  const ws = shellWords(text, inner);
  for (const body of inner) programWords(body, out, depth + 1);
  let previous = '';
  for (const w of ws) {
    const after = w.first ? '' : previous;
    previous = w.text;
    if (w.redirected) continue;
    // `sh -c 'tools/x.sh --fast'`, `eval "…"`: the text is run as commands
    if (RUNS_TEXT.has(after)) {
      programWords(w.text, out, depth + 1);
      continue;
    }
    // `FOO=tools/x.sh`: the value
    const word = /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.text) ? w.text.slice(w.text.indexOf('=') + 1) : w.text;
    if (w.dynamic) {
      // an expansion that cannot be told, in what would be a path (`$ROOT/tools/x.sh`), or as the
      // folder a program runs in (`cd "$GIT_PREFIX"`: h119 G5): where it leads cannot be judged,
      // so the repository is protected whole; one without a slash (`$EDITOR`, `"$@"`, `$1`) is an
      // argument or a name looked up on PATH, as a bare name is
      if (word.includes('/') || RUN_IN.has(after) || INTERPRETERS.has(basename(after))) out.add(TOP);
      continue;
    }
    // a folder the program is run in (`cd tools && ./run.sh`, `make -C build`: with or without a
    // slash) holds what it runs (h114; without the slash, found by an attack, h119 G4)
    if (RUN_IN.has(after) && !word.startsWith('-')) {
      if (word !== TOP) out.add(word); // `cd "$(git rev-parse --show-toplevel)"`: where it runs anyway
      continue;
    }
    // a word ending in a slash names a folder the program works on (`!prettier --write src/`),
    // not one it runs: protecting it refused every edit there (found by an attack, h112)
    if (word.endsWith('/')) continue;
    // an interpreter's script, named bare (`!python3 st.py`, `fsmonitor = sh fsmon.sh`): run from
    // the top as much as `./st.py` would be (found by an attack, h119 G1)
    if (INTERPRETERS.has(basename(after)) && !word.startsWith('-') && !word.includes('://') && word !== '' && word !== '.' && word !== '..') {
      out.add(word);
      continue;
    }
    if (word.startsWith('-') || word.includes('://') || !(isAbsolute(word) || word.startsWith('~/') || word.includes('/'))) continue;
    out.add(word);
  }
}

/**
 * The path words of {@link gitConfigProgramPaths} as the config writes them (`tools/x.sh`,
 * `~/bin/y`), not resolved: the value read as the shell reads it (git runs it with `sh -c` when it
 * holds shell syntax), split at metacharacters, with what `$(…)` and backticks run. A word that
 * holds an expansion that cannot be told and a slash is `.`, the repository's top (protected
 * whole); `"$(git rev-parse --show-toplevel)"` (and `$(pwd)`, `$PWD`) is the top itself, where git
 * runs an alias.
 */
export function gitConfigProgramWords(entries: readonly GitConfigEntry[]): string[] {
  const out = new Set<string>();
  for (const e of entries) {
    if (e.value === undefined) continue;
    const name = e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.*.${e.key}`;
    if (!PROGRAM_KEYS.has(name) && e.section !== 'alias' && e.section !== 'pager') continue; // `pager.<command>` has no subsection
    let value = e.value.trim();
    if (e.section === 'alias') {
      if (!value.startsWith('!')) continue; // a git command, not a program
      value = value.slice(1).trim();
    } else if (value.startsWith('!')) value = value.slice(1).trim();
    // every word that is a path, not only the first: `python3 tools/strip.py` runs the script
    // as much as `tools/strip.py` would (found by an attack, h108)
    programWords(value, out, 0);
  }
  return [...out];
}

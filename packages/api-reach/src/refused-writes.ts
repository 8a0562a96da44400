import { posix } from 'node:path';
import { pathIsUnder } from './path.js';

/**
 * The errors a refused write shows as, by what a tool prints for them. Which of them is a
 * refusal *of the sandbox* depends on the backend (bubblewrap's read-only mounts answer EROFS,
 * Seatbelt EPERM, a container's read-only root EROFS): each backend says so with its
 * {@link RefusalTest}; this file only reads the lines.
 */
export const REFUSAL_ERRNOS = ['EROFS', 'EACCES', 'EPERM', 'EBUSY', 'EEXIST', 'ENOTDIR', 'EISDIR'] as const;
/** One of {@link REFUSAL_ERRNOS}. */
export type RefusalErrno = (typeof REFUSAL_ERRNOS)[number];

/** How a named path takes part in the refused call: written (made, changed, removed), or the source of a rename. */
export const CANDIDATE_ROLES = ['target', 'rename-source'] as const;
/** One of {@link CANDIDATE_ROLES}. */
export type CandidateRole = (typeof CANDIDATE_ROLES)[number];

/**
 * One refusal a stderr line reports: the error and, when the line names one, the path (absolute,
 * resolved against the run's cwd; a name that was not UTF-8 has U+FFFD where its bytes were).
 */
export interface RefusedWriteCandidate {
  readonly errno: RefusalErrno;
  readonly path?: string;
  readonly role: CandidateRole;
}

// strerror text, Python's [Errno n], and the errno name (Node, npm) for each.
const ERRNO_TEXT: readonly (readonly [RefusalErrno, RegExp])[] = [
  ['EROFS', /read-only file system|\bEROFS\b|\[Errno 30\]/i],
  ['EACCES', /permission denied|\bEACCES\b|\[Errno 13\]/i],
  ['EPERM', /operation not permitted|\bEPERM\b|\[Errno 1\]/i],
  ['EBUSY', /device or resource busy|\bEBUSY\b|\[Errno 16\]/i],
  ['EEXIST', /file exists|\bEEXIST\b|\[Errno 17\]/i],
  ['ENOTDIR', /not a directory|\bENOTDIR\b|\[Errno 20\]/i],
  ['EISDIR', /is a directory|\bEISDIR\b|\[Errno 21\]/i],
];
// The strerror text alone, where a line puts the path just before or after it.
const MESSAGE = /:\s*(read-only file system|permission denied|operation not permitted|device or resource busy|file exists|not a directory|is a directory)\b/i;
const MESSAGE_THEN_PATH = /(?:read-only file system|permission denied|operation not permitted|device or resource busy|file exists|not a directory|is a directory): ([^'"\n]+)$/i;
// Node and npm: `EROFS: read-only file system, rename 'a' -> 'b'`.
const NODE = /\bE[A-Z]+: [^,\n]*, (\w+) '([^'\n]*)'(?: -> '([^'\n]*)')?/;
// coreutils' shell quoting: adjacent '...', $'...' and "..." pieces make one word.
const SHELL_WORD = /(?:'[^'\n]*'|\$'(?:[^'\\\n]|\\.)*'|"[^"\n]*")+/g;
const CURLY = /\u2018([^\u2019\n]*)\u2019|\u201c([^\u201d\n]*)\u201d/g;
// Python's bytes path: b'/p/\xff'.
const PY_BYTES = /\bb'((?:[^'\\\n]|\\.)*)'/g;
const BSD_RENAME = /\brename (.+?) to (.+?): [^:]+$/i;
const PROSE = /^(?:cannot|can't|could not|unable to|failed to) (?:create(?: directory| regular file)?|mkdir|touch|remove|open|write(?: to)?|make directory|lock config file|create work tree dir)\s+/i;
const CONTRACTION = /(?<=^|\s)(can|couldn|won|don|doesn|isn|wasn|didn)'t(?=\s)/gi;
// cargo and other Rust tools: "failed to create directory `/p`", then, a few lines below ("Caused
// by:"), "Read-only file system (os error 30)": the path and its error on lines of their own.
// Before, a refused unpack into cargo's registry gave nothing precise to ask for.
const RUST_CHAIN = /\bfailed to (?:create(?: directory)?|open|write(?: to)?|rename|remove|copy|unpack|lock)\b[^`\n]*`([^`\n]+)`/i;
const RUST_CHAIN_LINES = 4;
// A shell's `zsh:1` before its message: the program and a line number, not a path.
const PROGRAM_LINE = /^[\w.-]+:\d+$/;
// Words that stand where a path would in some tools' messages, never a path.
const NOT_A_PATH = /^(?:E[A-Z0-9]+|\[Errno \d+\].*|Error|error|fatal|warning|)$/;

const utf8 = new TextDecoder('utf-8');

function errnoOf(line: string): RefusalErrno | undefined {
  return ERRNO_TEXT.find(([, text]) => text.test(line))?.[0];
}

// Bytes escaped as \377 (octal), \xff, \n and friends, decoded as UTF-8 the way the run's
// stderr was: a byte that is not UTF-8 becomes U+FFFD, as in every other path the run reports.
function unescapeBytes(text: string): string {
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, e: 27, '\\': 92, "'": 39, '"': 34 };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\' || i + 1 === text.length) {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const rest = text.slice(i + 1);
    const octal = /^[0-7]{1,3}/.exec(rest);
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(rest);
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8) & 0xff);
      i += octal[0].length;
    } else if (hex) {
      bytes.push(Number.parseInt(hex[1]!, 16));
      i += hex[0].length;
    } else {
      const next = rest[0]!;
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return utf8.decode(Uint8Array.from(bytes));
}

function shellWord(word: string): string {
  let out = '';
  for (const piece of word.matchAll(/'([^'\n]*)'|\$'((?:[^'\\\n]|\\.)*)'|"([^"\n]*)"/g)) {
    out += piece[1] ?? (piece[2] !== undefined ? unescapeBytes(piece[2]) : piece[3]!);
  }
  return out;
}

type Named = { readonly path: string; readonly role: CandidateRole };

// The most specific shape wins: Node's `op 'a' -> 'b'`, Python's bytes, quoted words (two of them
// around " to " or " -> " are a rename's ends), BSD's `rename a to b`, then the text before or
// after the message. A bare text before the message is a path when it is one word or starts like
// one (`/…`, `./…`, `../…`); after "cannot create" and the like, the rest; in other prose, only a
// last word that looks like a path: prose would otherwise be read as one.
function namedIn(text: string): Named[] {
  let line = text;
  const node = NODE.exec(line);
  if (node) {
    const [, op, first, second] = node;
    if (second === undefined) return [{ path: first!, role: 'target' }];
    // symlink, link and copyfile name their source first: only the second is written
    return op === 'rename' ? [{ path: first!, role: 'rename-source' }, { path: second, role: 'target' }] : [{ path: second, role: 'target' }];
  }
  // an apostrophe in a word of the message is not a quote (busybox: "can't create 'x'")
  line = line.replace(CONTRACTION, '$1not');
  const bytes = [...line.matchAll(PY_BYTES)].map((m) => unescapeBytes(m[1]!));
  const quoted =
    bytes.length > 0
      ? bytes
      : [...line.replace(CURLY, (_, a: string | undefined, b: string | undefined) => `'${(a ?? b ?? '').replaceAll("'", "'\\''")}'`).matchAll(SHELL_WORD)].map((m) => shellWord(m[0]));
  const paths = quoted.filter((q) => !NOT_A_PATH.test(q));
  if (paths.length > 0) {
    const rename = paths.length === 2 && /['"]\s*(?:to|->)\s*['"$b]/.test(line.replace(CURLY, "'$1$2'"));
    return paths.map((path, i) => ({ path, role: rename && i === 0 ? 'rename-source' : 'target' }));
  }
  const bsd = BSD_RENAME.exec(line);
  if (bsd) return [{ path: bsd[1]!, role: 'rename-source' }, { path: bsd[2]!, role: 'target' }];
  const message = MESSAGE.exec(line);
  if (message !== null) {
    const before = line.slice(0, message.index).split(': ').pop()!.trim();
    if (!NOT_A_PATH.test(before) && !PROGRAM_LINE.test(before)) {
      const last = before.split(/\s+/).pop()!;
      // a word out of prose ("can't kill pid 1", "port 443") is a path only if it looks like one
      const path = !/\s/.test(before) || /^\.{0,2}\//.test(before) ? before : PROSE.test(before) ? before.replace(PROSE, '') : /\/|^\./.test(last) ? last : '';
      if (!NOT_A_PATH.test(path)) return [{ path, role: 'target' }];
    }
  }
  const after = MESSAGE_THEN_PATH.exec(line)?.[1]?.trim();
  if (after !== undefined && !NOT_A_PATH.test(after)) return [{ path: after, role: 'target' }];
  return [];
}

/**
 * Every refusal a command's stderr reports, line by line, as the tools print it (coreutils,
 * busybox, sh, bash, zsh, git, Python, Node, npm, BSD tools, and Rust's error chains, whose path
 * and error stand a few lines apart), with the paths named resolved
 * against `cwd`. A line that reports one of {@link REFUSAL_ERRNOS} without naming a path gives a
 * candidate without `path`. Pure: nothing is looked up on disk, nothing is judged here.
 */
export function refusedWriteCandidates(stderr: string, cwd: string): RefusedWriteCandidate[] {
  const out: RefusedWriteCandidate[] = [];
  // Rust's error chains (cargo): the path on one line, its error a few "Caused by:" lines below
  let chained: { readonly path: string; readonly at: number } | undefined;
  const lines = stderr.split('\n');
  for (const [i, line] of lines.entries()) {
    const errno = errnoOf(line);
    if (errno === undefined) {
      const rust = RUST_CHAIN.exec(line);
      if (rust) chained = { path: rust[1]!, at: i };
      continue;
    }
    const named = namedIn(line);
    if (named.length === 0 && chained !== undefined && i - chained.at <= RUST_CHAIN_LINES) {
      out.push({ errno, role: 'target', path: posix.resolve(cwd, chained.path) });
      chained = undefined;
      continue;
    }
    if (named.length === 0) out.push({ errno, role: 'target' });
    for (const { path, role } of named) out.push({ errno, role, path: posix.resolve(cwd, path) });
  }
  return out;
}

/** The kernel's own trees: a write there is refused by the kernel's rules, and no grant of a sandbox opens it. */
export const KERNEL_TREES = ['/proc', '/sys'] as const;

/** Whether a path lies in one of {@link KERNEL_TREES}; a backend does not report those as refused writes. */
export function inKernelTree(path: string): boolean {
  return KERNEL_TREES.some((tree) => pathIsUnder(path, tree, 'linux'));
}

/**
 * A backend's answer to "is this a refusal by this sandbox": `false` when not, `true` when it is,
 * or the path as the backend reports it (a darwin `/etc/x` is `/private/etc/x`). It may throw for
 * a path it cannot judge; the candidate is then not a refusal.
 */
export type RefusalTest = (candidate: RefusedWriteCandidate) => boolean | string;

/** What a run's stderr says about refused writes, judged by one backend's {@link RefusalTest}. */
export interface RefusedWrites {
  /** At least one line reports a refusal of this sandbox (with or without a path). */
  readonly denied: boolean;
  /** The paths refused, each once, in the order first named. */
  readonly paths: readonly string[];
}

/** The refusals in `stderr` that `isRefusal` says are the sandbox's; see {@link refusedWriteCandidates}. */
export function refusedWritesIn(stderr: string, cwd: string, isRefusal: RefusalTest): RefusedWrites {
  let denied = false;
  const paths = new Set<string>();
  for (const candidate of refusedWriteCandidates(stderr, cwd)) {
    let answer: boolean | string;
    try {
      answer = isRefusal(candidate);
    } catch {
      continue;
    }
    if (answer === false) continue;
    denied = true;
    if (typeof answer === 'string') paths.add(answer);
    else if (candidate.path !== undefined) paths.add(candidate.path);
  }
  return { denied, paths: [...paths] };
}

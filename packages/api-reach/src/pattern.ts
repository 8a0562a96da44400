import { ReachInputError } from './errors.js';
import { patternTokens } from './pattern-tokens.js';

/** Punctuation a pattern may escape outside a character class; inside one `-` may be escaped too. */
const ESCAPABLE = new Set('\\^$.*+?()[]{}|/');
const ESCAPABLE_IN_CLASS = new Set('\\^$.*+?()[]{}|/-');

const ALLOWED =
  'patterns may use only anchors (^ $), character classes ([…], [^…] and .), groups ((…) and (?:…)), alternation (|) and quantifiers (* + ? {n} {n,} {n,m}); escape any other punctuation with a backslash';

/**
 * Why `pattern` is not a rule pattern, or `undefined` when it is one. Rule patterns are kept to
 * a subset every sandbox generator can translate (Seatbelt regex, bubblewrap path expansion,
 * Docker mounts): anchors, character classes, groups, alternation and greedy quantifiers; no
 * escapes like `\d` or `\b`, no back-references, lookarounds, named groups or lazy quantifiers.
 * A pattern is matched against the whole path, and `.` matches any character, `/` and newline
 * included.
 */
export function checkPattern(pattern: string): string | undefined {
  if (pattern.length === 0) return 'the pattern is empty';
  let inClass = false;
  let classStart = -1;
  let quantifiable = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) return `a trailing backslash at position ${i}`;
      if (!(inClass ? ESCAPABLE_IN_CLASS : ESCAPABLE).has(next)) {
        return `the escape \\${next} at position ${i} is not allowed (only escaped punctuation is)`;
      }
      i++;
      quantifiable = true;
      continue;
    }
    if (inClass) {
      if (c === ']' && i > classStart + 1 && !(i === classStart + 2 && pattern[classStart + 1] === '^')) {
        inClass = false;
        quantifiable = true;
      }
      continue;
    }
    switch (c) {
      case '[':
        inClass = true;
        classStart = i;
        if (pattern[i + 1] === ']' || (pattern[i + 1] === '^' && pattern[i + 2] === ']')) {
          return `the empty character class at position ${i} is not allowed`;
        }
        break;
      case '(':
        if (pattern[i + 1] === '?') {
          if (pattern[i + 2] !== ':') {
            return `the group '(?${pattern[i + 2] ?? ''}' at position ${i} is not allowed (lookarounds and named groups cannot be translated)`;
          }
          i += 2;
        }
        quantifiable = false;
        break;
      case '|':
        quantifiable = false;
        break;
      case ')':
      case '.':
        quantifiable = true;
        break;
      case '^':
      case '$':
        quantifiable = false;
        break;
      case '*':
      case '+':
      case '?':
      case '{': {
        if (!quantifiable) return `the quantifier '${c}' at position ${i} has nothing to repeat`;
        let end = i;
        if (c === '{') {
          const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
          if (m === null) return `the '{' at position ${i} does not start a quantifier {n}, {n,} or {n,m}; escape it as \\{`;
          if (m[3] !== undefined && m[3] !== '' && Number(m[3]) < Number(m[1])) {
            return `the quantifier ${m[0]} at position ${i} has its bounds the wrong way round`;
          }
          end = i + m[0].length - 1;
        }
        if (pattern[end + 1] === '?') return `the lazy quantifier at position ${i} is not allowed`;
        if (pattern[end + 1] === '*' || pattern[end + 1] === '+' || pattern[end + 1] === '{') {
          return `the quantifier at position ${end + 1} repeats a quantifier`;
        }
        i = end;
        quantifiable = false;
        break;
      }
      case '}':
      case ']':
        return `the unmatched '${c}' at position ${i}; escape it as \\${c}`;
      default:
        quantifiable = true;
    }
  }
  if (inClass) return `the character class opened at position ${classStart} is not closed`;
  try {
    new RegExp(pattern, 'su');
  } catch (error) {
    return `it is not a valid regular expression (${(error as Error).message})`;
  }
  return undefined;
}

/** Patterns already found valid; the lists repeat the same few on every reach. */
const VALID = new Set<string>();

/**
 * Throws a {@link ReachInputError} when `pattern` is not a rule pattern (see {@link checkPattern}),
 * so a rule that a sandbox generator could not translate never gets as far as a policy.
 */
export function validatePattern(pattern: string): void {
  if (VALID.has(pattern)) return;
  const problem = checkPattern(pattern);
  if (problem !== undefined) {
    throw new ReachInputError('pattern', `the path pattern '${pattern}' is refused: ${problem}; ${ALLOWED}.`);
  }
  if (VALID.size > 10_000) VALID.clear();
  VALID.add(pattern);
}

/**
 * Splits a pattern at its top-level `|` (outside groups and classes): one string per alternative,
 * the pattern itself when it has none. Every backend that reads a pattern's alternatives uses this one.
 */
export function topLevelAlternatives(pattern: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (const t of patternTokens(pattern)) {
    if (t.kind === 'open') depth++;
    else if (t.kind === 'close') depth--;
    else if (t.kind === 'alternation' && depth === 0) {
      out.push(pattern.slice(from, t.start));
      from = t.start + 1;
    }
  }
  out.push(pattern.slice(from));
  return out;
}

/**
 * The longest run of literal characters that every path a valid pattern matches contains, or ''
 * when there is none to be sure of: only a pattern of one top-level alternative has one, and only
 * atoms outside every group and not quantified count. A path without it is not matched, so a test
 * can look for it before running a regex: the node_modules exception's landings above a
 * `node_modules` took 1.8 µs a path to rule out by backtracking, `includes('node_modules')` takes nanoseconds.
 */
export function requiredLiteral(pattern: string): string {
  const tokens = patternTokens(pattern);
  let best = '';
  let run = '';
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'alternation' && depth === 0) return '';
    if (t.kind === 'open') depth++;
    else if (t.kind === 'close') depth--;
    // a quantified atom may be absent or repeated: it ends the run, as a class, `.`, an anchor or a group does
    if (depth === 0 && t.kind === 'atom' && t.literal !== undefined && tokens[i + 1]?.kind !== 'quantifier') run += t.literal;
    else {
      if (run.length > best.length) best = run;
      run = '';
    }
  }
  return run.length > best.length ? run : best;
}

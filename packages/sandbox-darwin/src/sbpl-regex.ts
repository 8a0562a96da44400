import { checkPattern } from '@aalis/api-reach';
import { DarwinProfileError } from './darwin-profile-error.js';

// SBPL regex is a POSIX-style extended regex over the path's bytes, unanchored. The policy's
// patterns are JavaScript regexes in api-reach's dialect (anchors, character classes, groups,
// alternation, greedy quantifiers; checked by its checkPattern), matched against the whole path,
// without case and with `.` matching newlines on darwin. This file translates that dialect and
// nothing else: every construct it cannot express exactly is refused, because a pattern we
// half-understand is a deny rule with a hole in it.

const ESCAPED_OUTSIDE = new Set(['.', '[', '(', ')', '*', '+', '?', '{', '|', '^', '$', '\\']);
const PUNCTUATION_ESCAPES = new Set([...'^$\\.*+?()[]{}|/-']);
const MAX_REPEAT = 32;
function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** The case variants JavaScript's `i` flag treats as equal to `ch` (simple, one-to-one mappings). */
function caseVariants(ch: string): string[] {
  const variants = new Set([ch]);
  for (const other of [ch.toLowerCase(), ch.toUpperCase()]) {
    if ([...other].length === 1) variants.add(other);
  }
  return [...variants];
}

/** One literal character as a regex unit that matches it without case. */
function literalUnit(ch: string): { text: string; single: boolean } {
  const code = ch.codePointAt(0)!;
  if (isAsciiLetter(code)) {
    const lower = ch.toLowerCase();
    return { text: `[${lower.toUpperCase()}${lower}]`, single: true };
  }
  if (code < 0x80) return { text: ESCAPED_OUTSIDE.has(ch) ? `\\${ch}` : ch, single: true };
  const variants = caseVariants(ch);
  // A non-ASCII character is several bytes, so it needs a group to be quantified or alternated.
  return variants.length > 1 ? { text: `(${variants.join('|')})`, single: true } : { text: ch, single: false };
}

/** A regex (SBPL dialect) matching exactly `text`, without case. */
export function literalRegex(text: string): string {
  let out = '';
  for (const ch of text) out += literalUnit(ch).text;
  return out;
}

/** Whether `text` would match differently with and without case folding. */
export function hasCaseVariants(text: string): boolean {
  for (const ch of text) if (caseVariants(ch).length > 1) return true;
  return false;
}

/** An ASCII character set rendered as an SBPL bracket expression. */
function renderClass(members: ReadonlySet<number>, negated: boolean, fail: (problem: string) => never): string {
  if (members.has(0x5c)) fail('has a backslash inside a character class, which SBPL regex does not read the same way');
  const specials = { close: members.has(0x5d), open: members.has(0x5b), caret: members.has(0x5e), dash: members.has(0x2d) };
  const plain = [...members].filter((code) => ![0x5d, 0x5b, 0x5e, 0x2d].includes(code)).sort((a, b) => a - b);
  if (!negated && plain.length === 0 && !specials.close && !specials.open && !specials.dash && specials.caret) return '\\^';
  let body = specials.close ? ']' : '';
  for (let i = 0; i < plain.length; ) {
    let j = i;
    while (j + 1 < plain.length && plain[j + 1] === plain[j]! + 1) j++;
    const from = String.fromCharCode(plain[i]!);
    const to = String.fromCharCode(plain[j]!);
    body += j - i >= 2 ? `${from}-${to}` : plain.slice(i, j + 1).map((code) => String.fromCharCode(code)).join('');
    i = j + 1;
  }
  // `^` anywhere but first is literal; `[` right before `-` or `]` cannot open a [:class:].
  if (specials.caret) body = body === '' ? (negated ? '^' : '\\^') : body + '^';
  if (specials.open) body += '[';
  if (specials.dash) body += '-';
  return `[${negated ? '^' : ''}${body}]`;
}

function foldSet(members: Set<number>): Set<number> {
  for (const code of [...members]) {
    if (isAsciiLetter(code)) members.add(code ^ 0x20);
  }
  return members;
}

/**
 * Translates one policy pattern (JavaScript regex source, restricted dialect) to SBPL regex text
 * that matches the same paths without case. Throws {@link DarwinProfileError} for anything
 * outside the dialect: lookaround, backreferences, word boundaries, `\s`, Unicode escapes,
 * non-ASCII inside a character class, empty alternatives, repeats over {@link MAX_REPEAT}.
 */
export function translatePattern(source: string, rule: string): string {
  const cached = translations.get(source);
  if (cached !== undefined) return cached;
  const translated = translateUncached(source, rule);
  // The protected lists are the same patterns for every command; a refused pattern is never cached.
  if (translations.size >= MAX_CACHED) translations.clear();
  translations.set(source, translated);
  return translated;
}

const translations = new Map<string, string>();
const MAX_CACHED = 2048;

function translateUncached(source: string, rule: string): string {
  const fail = (problem: string, fix = 'write the pattern with anchors, character classes, groups, alternation and quantifiers only'): never => {
    throw new DarwinProfileError(source, rule, problem, fix);
  };
  const problem = checkPattern(source);
  if (problem !== undefined) fail(`is refused by the pattern dialect: ${problem}`);
  const chars = [...source];
  let pos = 0;

  const peek = (): string | undefined => chars[pos];

  function parseBranches(depth: number): string[] {
    const branches = [parseSequence(depth)];
    while (peek() === '|') {
      pos++;
      branches.push(parseSequence(depth));
    }
    if (branches.some((branch) => branch === '')) fail('has an empty alternative, which SBPL regex does not accept');
    return branches;
  }

  function parseAlternation(depth: number): string {
    return parseBranches(depth).join('|');
  }

  // Whether the sequence parsed last began with `^` and ended with `$` (as atoms, not escaped).
  let anchored = { start: false, end: false };

  function parseSequence(depth: number): string {
    let out = '';
    let first = true;
    let lastAnchor = false;
    let startAnchor = false;
    for (;;) {
      const ch = peek();
      if (ch === undefined || ch === '|' || (ch === ')' && depth > 0)) {
        anchored = { start: startAnchor, end: lastAnchor && out.endsWith('$') };
        return out;
      }
      const atom = parseAtom(depth);
      if (first) startAnchor = atom.anchor && atom.text === '^';
      first = false;
      lastAnchor = atom.anchor;
      out += parseQuantifier(atom);
    }
  }

  type Atom = { text: string; single: boolean; anchor: boolean };

  function parseAtom(depth: number): Atom {
    const ch = chars[pos++]!;
    switch (ch) {
      case '^':
      case '$':
        return { text: ch, single: true, anchor: true };
      case '.':
        return { text: '.', single: true, anchor: false };
      case '(': {
        if (peek() === '?') {
          if (chars[pos + 1] === ':') pos += 2;
          else fail('has a lookaround or named group, which SBPL regex has no equivalent for');
        }
        const inner = parseAlternation(depth + 1);
        if (peek() !== ')') fail('has an unclosed group');
        pos++;
        if (inner === '') fail('has an empty group, which SBPL regex does not accept');
        return { text: `(${inner})`, single: true, anchor: false };
      }
      case ')':
        return fail('has an unmatched ")"');
      case '[':
        return { text: parseClass(), single: true, anchor: false };
      case '\\':
        return parseEscape();
      case '*':
      case '+':
      case '?':
      case '{':
        return fail(`has a quantifier "${ch}" with nothing to repeat`);
      default: {
        const unit = literalUnit(ch);
        return { ...unit, anchor: false };
      }
    }
  }

  function parseEscape(): Atom {
    const ch = chars[pos++];
    if (ch === undefined) return fail('ends in a lone backslash');
    if (PUNCTUATION_ESCAPES.has(ch)) return { ...literalUnit(ch), anchor: false };
    return fail(`uses the escape "\\${ch}", which is outside the pattern dialect (anchors, classes, groups, alternation, quantifiers)`);
  }

  function classMember(): number[] {
    const ch = chars[pos++];
    if (ch === undefined) return fail('has an unclosed character class');
    if (ch === '\\') {
      const esc = chars[pos++];
      if (esc === undefined) return fail('ends in a lone backslash');
      if (PUNCTUATION_ESCAPES.has(esc)) return [esc.charCodeAt(0)];
      return fail(`uses the escape "\\${esc}" inside a character class, which is outside the pattern dialect`);
    }
    const code = ch.codePointAt(0)!;
    if (code >= 0x80) fail('has a non-ASCII character inside a character class; SBPL regex compares bytes, so it cannot be expressed', 'spell the alternatives out as a group, e.g. (é|è)');
    if (code < 0x20 || code === 0x7f) fail('has a control character inside a character class');
    return [code];
  }

  function parseClass(): string {
    let negated = false;
    if (peek() === '^') {
      negated = true;
      pos++;
    }
    const members = new Set<number>();
    let first = true;
    for (;;) {
      const ch = peek();
      if (ch === undefined) fail('has an unclosed character class');
      if (ch === ']' && !first) {
        pos++;
        break;
      }
      if (ch === ']') fail('has an empty character class, which never matches');
      first = false;
      const startPos = pos;
      const low = classMember();
      if (peek() === '-' && chars[pos + 1] !== ']' && chars[pos + 1] !== undefined) {
        pos++;
        const high = classMember();
        if (low.length !== 1 || high.length !== 1) fail(`has a range with a class shorthand at "${chars.slice(startPos, pos).join('')}"`);
        for (let code = low[0]!; code <= high[0]!; code++) members.add(code);
      } else {
        for (const code of low) members.add(code);
      }
    }
    return renderClass(foldSet(members), negated, (problem) => fail(problem));
  }

  function parseQuantifier(atom: Atom): string {
    const ch = peek();
    if (ch !== '*' && ch !== '+' && ch !== '?' && ch !== '{') return atom.text;
    if (atom.anchor) fail('puts a quantifier on an anchor');
    const unit = atom.single ? atom.text : `(${atom.text})`;
    let out: string;
    if (ch === '{') {
      const match = /^\{(\d+)(,(\d*))?\}/.exec(chars.slice(pos).join(''));
      if (match === null) return fail('has a "{" that is not a repeat count');
      pos += [...match[0]].length;
      const min = Number(match[1]);
      const max = match[2] === undefined ? min : match[3] === '' ? Number.POSITIVE_INFINITY : Number(match[3]);
      if (min > MAX_REPEAT || (max !== Number.POSITIVE_INFINITY && max > MAX_REPEAT)) {
        fail(`repeats more than ${MAX_REPEAT} times, which is expanded by hand for SBPL and refused past that`);
      }
      if (max < min) fail('has a repeat count whose maximum is below its minimum');
      out = unit.repeat(min) + (max === Number.POSITIVE_INFINITY ? `${unit}*` : `${unit}?`.repeat(max - min));
    } else {
      pos++;
      out = unit + ch;
    }
    return out;
  }

  const branches = parseBranches(0);
  if (pos < chars.length) fail(`has an unexpected "${chars[pos]}"`);
  // The policy's pattern must match the whole path; an SBPL regex searches, so anchor it.
  if (branches.length === 1) return `${anchored.start ? '' : '^'}${branches[0]!}${anchored.end ? '' : '$'}`;
  return `^(${branches.join('|')})$`;
}

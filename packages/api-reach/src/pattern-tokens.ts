/**
 * One token of a rule pattern, by where it starts in the pattern's text. `atom` is one thing
 * matched: a character (a code point outside the BMP is one atom of its two code units), an
 * escaped character, a character class `[…]` or `.`; `literal` is the one character it matches,
 * or undefined for a class, `.` and an escape that is not of punctuation (`\d` matches a class).
 */
export type PatternToken =
  | { readonly kind: 'atom'; readonly start: number; readonly text: string; readonly literal: string | undefined }
  | { readonly kind: 'open'; readonly start: number; readonly text: '(' | '(?:' }
  | { readonly kind: 'close'; readonly start: number; readonly text: ')' }
  | { readonly kind: 'alternation'; readonly start: number; readonly text: '|' }
  | { readonly kind: 'anchor'; readonly start: number; readonly text: '^' | '$' }
  | { readonly kind: 'quantifier'; readonly start: number; readonly text: string };

/** `{n}`, `{n,}` or `{n,m}`, read where the `{` is (sticky). */
const QUANTIFIER = /\{\d+(?:,\d*)?\}/y;
const isHigh = (c: string | undefined) => c !== undefined && c >= '\uD800' && c <= '\uDBFF';
const isLow = (c: string | undefined) => c !== undefined && c >= '\uDC00' && c <= '\uDFFF';

/**
 * The tokens of `pattern`, in order. The one reading of the pattern syntax that every walk of a
 * valid pattern's structure shares (its alternatives, its anchors, its required literal, a
 * backend's literal start); which patterns are valid is {@link checkPattern}'s to say. It never
 * throws: on text that is not a valid pattern it reads on as far as it can (an unclosed class runs
 * to the end, a `{` that opens no quantifier is a character, a lone `\` at the end is one too).
 */
export function patternTokens(pattern: string): PatternToken[] {
  const tokens: PatternToken[] = [];
  for (let i = 0; i < pattern.length; ) {
    const start = i;
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) {
        tokens.push({ kind: 'atom', start, text: c, literal: c });
        i++;
        continue;
      }
      const width = isHigh(next) && isLow(pattern[i + 2]) ? 2 : 1;
      const escaped = pattern.slice(i + 1, i + 1 + width);
      tokens.push({ kind: 'atom', start, text: c + escaped, literal: /^[A-Za-z0-9]$/.test(escaped) ? undefined : escaped });
      i += 1 + width;
    } else if (c === '[') {
      // a `]` first (or after `^`) is no member in the dialect (an empty class is refused), so the first `]` ends it
      let end = i + 1;
      while (end < pattern.length && pattern[end] !== ']') end += pattern[end] === '\\' ? 2 : 1;
      end = Math.min(end + 1, pattern.length);
      tokens.push({ kind: 'atom', start, text: pattern.slice(i, end), literal: undefined });
      i = end;
    } else if (c === '(') {
      const text = pattern.startsWith('(?:', i) ? '(?:' : '(';
      tokens.push({ kind: 'open', start, text });
      i += text.length;
    } else if (c === ')') {
      tokens.push({ kind: 'close', start, text: ')' });
      i++;
    } else if (c === '|') {
      tokens.push({ kind: 'alternation', start, text: '|' });
      i++;
    } else if (c === '^' || c === '$') {
      tokens.push({ kind: 'anchor', start, text: c });
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      tokens.push({ kind: 'quantifier', start, text: c });
      i++;
    } else if (c === '{' && quantifierAt(pattern, i) !== undefined) {
      const text = quantifierAt(pattern, i)!;
      tokens.push({ kind: 'quantifier', start, text });
      i += text.length;
    } else if (c === '.') {
      tokens.push({ kind: 'atom', start, text: c, literal: undefined });
      i++;
    } else {
      const text = isHigh(c) && isLow(pattern[i + 1]) ? pattern.slice(i, i + 2) : c;
      tokens.push({ kind: 'atom', start, text, literal: text });
      i += text.length;
    }
  }
  return tokens;
}

function quantifierAt(pattern: string, at: number): string | undefined {
  QUANTIFIER.lastIndex = at;
  return QUANTIFIER.exec(pattern)?.[0];
}

import { DarwinProfileError } from './darwin-profile-error.js';

// The SBPL reader is TinyScheme: inside "..." only the double quote ends the string and only the
// backslash starts an escape. Escaping those two closes every way out of the string; \n \t \r are
// the escapes TinyScheme has always read, so newlines stay visible instead of spanning lines.
const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r' };

/**
 * `text` as an SBPL string literal, quotes included. Non-ASCII is kept as its UTF-8 bytes (what
 * the kernel compares). NUL and the other control characters are refused: NUL would cut the
 * string short in C, and the rest have no escape every SBPL reader is known to accept.
 */
export function sbplString(text: string, rule: string): string {
  let out = '"';
  for (const ch of text) {
    const named = NAMED_ESCAPES[ch];
    if (named !== undefined) {
      out += named;
      continue;
    }
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f) {
      const shown = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
      throw new DarwinProfileError(
        text,
        rule,
        `contains the control character ${shown}, which a Seatbelt profile cannot carry safely`,
        code === 0
          ? 'a path never contains NUL: check where this path was built'
          : 'rename the file or directory, or leave it out of the policy',
      );
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      throw new DarwinProfileError(text, rule, 'contains a lone UTF-16 surrogate, which is no path', 'pass the real path as the kernel reports it');
    }
    out += ch;
  }
  return out + '"';
}

import { UNSHOWN_CHARACTERS } from '@aalis/core';

/**
 * Text from elsewhere (the model's reply, a tool's parameters, an ask's summary, a file name a
 * sandboxed command made) made safe to print on a terminal. A terminal obeys control sequences in
 * what it prints: `\r` and ESC `[2K` rewrite the line an ask is on, so an ask could show one
 * command while another is approved; OSC 52 writes the clipboard; bidirectional overrides
 * (U+202E, U+2066..) show text in another order than it runs. Every such character is shown
 * as its escape (`\x1b`, `\u202e`) instead, so what is printed is what was sent.
 */

const UNSAFE = new RegExp(UNSHOWN_CHARACTERS, 'g');
const UNSAFE_OR_NEWLINE = new RegExp(`${UNSHOWN_CHARACTERS}|\n`, 'g');

function escaped(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control and bidirectional formatting character escaped; newlines and tabs kept (a reply's lines). */
export function forTerminal(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/** As {@link forTerminal}, and newlines escaped too: for what must stay on one line (an ask's summary, a tool's parameters). */
export function forTerminalLine(text: string): string {
  return text.replace(UNSAFE_OR_NEWLINE, escaped);
}

/**
 * As {@link forTerminal}, every such character written `\uXXXX`: for output that may be JSON
 * (`--json`), where that escape keeps a string's value and the document valid.
 */
export function forTerminalAsJson(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

import { describe, expect, it } from 'vitest';
import { forTerminal, forTerminalLine } from './terminal-text.js';

describe('text printed on a terminal', () => {
  it.each([
    ['plain text, tabs and newlines kept', 'a\tb\nc', 'a\tb\nc', 'a\tb\\x0ac'],
    ['a carriage return rewriting the line', 'rm -rf ~\rls', 'rm -rf ~\\x0dls', 'rm -rf ~\\x0dls'],
    ['an erase-line CSI', 'x\u001b[2Ky', 'x\\x1b[2Ky', 'x\\x1b[2Ky'],
    ['OSC 52 (clipboard) ended by BEL', '\u001b]52;c;aGk=\u0007', '\\x1b]52;c;aGk=\\x07', '\\x1b]52;c;aGk=\\x07'],
    ['a C1 CSI and DEL', '\u009b2K\u007f', '\\x9b2K\\x7f', '\\x9b2K\\x7f'],
    ['bidirectional overrides and isolates', 'a\u202eb\u2066c\u200fd', 'a\\u202eb\\u2066c\\u200fd', 'a\\u202eb\\u2066c\\u200fd'],
    ['other text outside ASCII as it is', 'héllo ✓ 日本', 'héllo ✓ 日本', 'héllo ✓ 日本'],
  ])('%s', (_, text, kept, line) => {
    expect(forTerminal(text)).toBe(kept);
    expect(forTerminalLine(text)).toBe(line);
  });
});

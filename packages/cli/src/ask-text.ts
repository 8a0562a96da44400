import { ApprovalSubjectSchema, subjectLines } from '@aalis/plugin-approval';
import { forTerminal, forTerminalLine } from './terminal-text.js';

/**
 * What an ask asks, for a terminal: the subject whole, line by line (plugin-approval's
 * `subjectLines`), each line indented and escaped, ending in a newline. The summary alone is one
 * line cut at 400 characters, in which a command's second line could not be seen. A subject that
 * is not an ask's subject (a daemon of another version) is printed as its JSON.
 */
export function askText(subject: unknown): string {
  const parsed = ApprovalSubjectSchema.safeParse(subject);
  if (!parsed.success) return `  the ask's subject: ${forTerminalLine(JSON.stringify(subject) ?? String(subject))}\n`;
  return subjectLines(parsed.data).map((line) => `  ${forTerminal(line)}\n`).join('');
}

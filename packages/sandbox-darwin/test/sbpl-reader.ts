import { AalisError } from '@aalis/core';

// A strict reader of the SBPL this package writes, written apart from the generator so the tests
// check the text, not the generator's intent. Stricter than TinyScheme on purpose: a raw control
// character inside a string, an unknown escape or an unterminated string is an error here even
// where TinyScheme might read something.

/** One parsed form: a list, a string (decoded) or a bare symbol. */
export type SbplNode =
  | { readonly type: 'list'; readonly items: readonly SbplNode[] }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'symbol'; readonly value: string };

/** The text is not well formed SBPL (by this reader's strict rules). */
export class SbplReadError extends AalisError<'sbpl-read'> {
  override readonly name = 'SbplReadError';
  constructor(message: string) {
    super('sbpl-read', message);
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', '"': '"', n: '\n', t: '\t', r: '\r' };

/** Reads `text` into its top-level forms; comments are dropped. Throws {@link SbplReadError}. */
export function readSbpl(text: string): SbplNode[] {
  const chars = [...text];
  let pos = 0;
  const stack: SbplNode[][] = [[]];
  while (pos < chars.length) {
    const ch = chars[pos]!;
    if (ch === ';') {
      while (pos < chars.length && chars[pos] !== '\n') pos++;
      continue;
    }
    if (ch === ' ' || ch === '\n' || ch === '\t') {
      pos++;
      continue;
    }
    if (ch === '(') {
      stack.push([]);
      pos++;
      continue;
    }
    if (ch === ')') {
      if (stack.length === 1) throw new SbplReadError(`unbalanced ")" at ${pos}`);
      const items = stack.pop()!;
      stack.at(-1)!.push({ type: 'list', items });
      pos++;
      continue;
    }
    if (ch === '"') {
      pos++;
      let value = '';
      for (;;) {
        const c = chars[pos++];
        if (c === undefined) throw new SbplReadError('unterminated string');
        if (c === '"') break;
        const code = c.codePointAt(0)!;
        if (code < 0x20 || code === 0x7f) throw new SbplReadError(`raw control character U+${code.toString(16)} inside a string`);
        if (c === '\\') {
          const e = chars[pos++];
          const decoded = e === undefined ? undefined : ESCAPES[e];
          if (decoded === undefined) throw new SbplReadError(`unknown escape "\\${e ?? ''}" inside a string`);
          value += decoded;
          continue;
        }
        value += c;
      }
      stack.at(-1)!.push({ type: 'string', value });
      continue;
    }
    let symbol = '';
    while (pos < chars.length && !' \n\t()";'.includes(chars[pos]!)) symbol += chars[pos++];
    if (!/^[A-Za-z0-9*_:#.-]+$/.test(symbol)) throw new SbplReadError(`unexpected symbol ${JSON.stringify(symbol)} at ${pos}`);
    stack.at(-1)!.push({ type: 'symbol', value: symbol });
  }
  if (stack.length !== 1) throw new SbplReadError(`${stack.length - 1} unclosed "("`);
  return stack[0]!;
}

/** The head symbols of a list form, e.g. `['deny', 'file-write*']`. */
export function heads(node: SbplNode): string[] {
  if (node.type !== 'list') return [];
  const out: string[] = [];
  for (const item of node.items) {
    if (item.type !== 'symbol') break;
    out.push(item.value);
  }
  return out;
}

/** Every string inside `node`, depth first. */
export function stringsOf(node: SbplNode): string[] {
  if (node.type === 'string') return [node.value];
  if (node.type === 'symbol') return [];
  return node.items.flatMap(stringsOf);
}

/** The `(kind "value")` filters inside `node`, depth first; `(remote ip "x")` has kind `remote ip`. */
export function filtersOf(node: SbplNode): { kind: string; value: string }[] {
  if (node.type !== 'list') return [];
  const last = node.items.at(-1);
  const leading = node.items.slice(0, -1);
  if (leading.length > 0 && last?.type === 'string' && leading.every((item) => item.type === 'symbol')) {
    return [{ kind: leading.map((item) => (item as { value: string }).value).join(' '), value: last.value }];
  }
  return node.items.flatMap(filtersOf);
}

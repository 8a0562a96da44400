import { type PathRule, patternTokens, topLevelAlternatives } from '@aalis/api-reach';
import { darwinPath, darwinPatternPrefix } from './darwin-path.js';
import { CARRY_OPERATIONS } from './profile-layers.js';
import type { SbplQuote } from './profile-params.js';
import { exactPathOf, pathFilter, renderFilter } from './sbpl-filter.js';

// A read deny is a rule about a name. Inside a writable root, `mv .env notes.txt`, `ln .env
// notes.txt` or `cp -c .env notes.txt` gives the same bytes a name no rule denies, and renaming
// a folder above a denied path does the same for everything under it. So for every read deny:
// no unlink (rename away), link or clone of the denied path, and no unlink of the folders above
// it. Patterns that match by name anywhere (`.env` in any folder) survive a folder rename, so
// only the folders above a pattern's literal start are listed.


/** The literal path a pattern alternative starts with (`^/a/b\.c…` → `/a/b.c`), or '' when it does not start at `/`. */
function literalStart(alternative: string): string {
  const tokens = patternTokens(alternative);
  if (tokens[0]?.kind !== 'anchor' || tokens[0].text !== '^') return '';
  let out = '';
  for (let i = 1; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind !== 'atom' || t.literal === undefined) break;
    const next = tokens[i + 1];
    // a quantifier that allows none makes its atom optional: it is not part of the start
    if (next?.kind === 'quantifier' && next.text !== '+') break;
    out += t.literal;
    if (next?.kind === 'quantifier') break;
  }
  return out.startsWith('/') ? out : '';
}

/** The folders whose rename would carry `rule`'s matches to another name: those above it, up to (not) `/`. */
export function foldersAbove(rule: PathRule, where: string): string[] {
  let starts: string[];
  if ('path' in rule) starts = [darwinPath(rule.path, where)];
  else {
    const exact = exactPathOf(rule.pattern);
    starts = exact?.startsWith('/') ? [darwinPath(exact, where)] : topLevelAlternatives(darwinPatternPrefix(rule.pattern)).map(literalStart);
  }
  const folders: string[] = [];
  for (const start of starts) {
    if (start === '') continue;
    // The start itself is matched by the rule only when it is the whole path; its parent always is a folder above.
    for (let dir = start.slice(0, start.lastIndexOf('/')); dir !== ''; dir = dir.slice(0, dir.lastIndexOf('/'))) folders.push(darwinPath(dir, where));
  }
  return folders;
}

/**
 * The `readDeny.carry` rules: per read deny, no rename, link or clone of what it denies (minus
 * `readAllowWithin`, readable again); then one rule for the folders above every denied path.
 * `denied[i]` is `readDeny[i]`'s filter as already written for the read layer (rendered once).
 */
export function carryLines(readDeny: readonly PathRule[], denied: readonly string[], readAllowWithin: readonly string[], quote: SbplQuote): string[] {
  const readable = readAllowWithin.map((root, index) => `(require-not ${renderFilter(pathFilter(root, 'subtree', `readAllowWithin[${index}]`), `readAllowWithin[${index}]`, quote)})`).join(' ');
  const lines = denied.map((filter) => `(deny ${CARRY_OPERATIONS} ${readable === '' ? filter : `(require-all ${filter} ${readable})`})`);
  const folders = new Map<string, string>();
  readDeny.forEach((rule, index) => {
    for (const folder of foldersAbove(rule, `readDeny[${index}]`)) if (!folders.has(folder)) folders.set(folder, `readDeny[${index}]`);
  });
  if (folders.size > 0) {
    const filters = [...folders].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([folder, where]) => renderFilter(pathFilter(folder, 'exact', where), where, quote));
    lines.push(`(deny ${CARRY_OPERATIONS} ${filters.join(' ')})`);
  }
  return lines;
}

/** The characters that are syntax in a rule pattern (validatePattern's subset). */
const PATTERN_META = new Set([...'^$.*+?()[]{}|']);

/** What a whole-path pattern fixes at its start ({@link patternLiteral}). */
export interface PatternLiteral {
  /** The text every match starts with (escapes undone); empty for a pattern not anchored at `^`. */
  readonly literal: string;
  /** The pattern is that text exactly (`^lit$`). */
  readonly exact: boolean;
  /** The literal ends a whole name: what follows is `$`, `/`, or a group that opens on `/` (`^/r/.git/worktrees(?:/…)?$`). */
  readonly whole: boolean;
}

/** The literal start of a rule pattern: where its matches lie, for those who must find them on disk or judge what a symlink redirects. */
export function patternLiteral(pattern: string): PatternLiteral {
  if (!pattern.startsWith('^')) return { literal: '', exact: false, whole: false };
  let literal = '';
  for (let i = 1; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      literal += pattern[i + 1] ?? '';
      i++;
    } else if (PATTERN_META.has(c)) {
      const rest = pattern.slice(i);
      return { literal, exact: c === '$' && i === pattern.length - 1, whole: rest.startsWith('$') || rest.startsWith('(?:/') };
    } else literal += c;
  }
  return { literal, exact: false, whole: false };
}

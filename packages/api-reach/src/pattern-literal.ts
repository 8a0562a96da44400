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
  /** Something below the literal can match: what follows holds a `/` or a `.` wildcard. */
  readonly deeper: boolean;
}

/** The literal start of a rule pattern: where its matches lie, for those who must find them on disk or judge what a symlink redirects. */
export function patternLiteral(pattern: string): PatternLiteral {
  if (!pattern.startsWith('^')) return { literal: '', exact: false, whole: false, deeper: true };
  let literal = '';
  for (let i = 1; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      literal += pattern[i + 1] ?? '';
      i++;
    } else if (PATTERN_META.has(c)) {
      const rest = pattern.slice(i);
      // a slash in a class (`[^/]*`) crosses no folder
      const bare = rest.replace(/\[(?:\\.|[^\]])*\]/g, 'x');
      return { literal, exact: c === '$' && i === pattern.length - 1, whole: rest.startsWith('$') || rest.startsWith('(?:/'), deeper: bare.includes('/') || /\.[*+]/.test(bare) };
    } else literal += c;
  }
  return { literal, exact: false, whole: false, deeper: false };
}

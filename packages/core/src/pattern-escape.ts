const PATTERN_SYNTAX = /[\\^$.*+?()[\]{}|]/g;

/**
 * A rule pattern fragment matching `text` literally (only the escapes api-reach's
 * `validatePattern` accepts). Here, below api-reach, so that the host-reading rule builders
 * (landing-extras.ts) name an exact path as api-reach does.
 */
export function escapePattern(text: string): string {
  return text.replace(PATTERN_SYNTAX, '\\$&');
}

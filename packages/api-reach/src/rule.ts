/**
 * One path or one pattern. `{ path }` covers that path and everything under it; `{ pattern }`
 * is a regular expression matched against the whole path.
 */
export type PathMatcher = { readonly path: string } | { readonly pattern: string };

/** A matcher with carve-outs: a path under `except` is not covered by the rule. */
export type PathRule = PathMatcher & { readonly except?: readonly PathMatcher[] };

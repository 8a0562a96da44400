import { landingNames, type SandboxPolicy } from '@aalis/api-reach';

/** The never-written secrets of the sandbox spec: `.env` names a command commonly creates. */
const ENV_NAMES = ['.env', '.env.local', '.env.development', '.env.production', '.env.test'] as const;

/**
 * Names whose creation inside a writable root is refused when the policy denies writing them:
 * the never-written secrets of the sandbox spec and every placeholder name of api-reach's landing
 * table (`landingNames()`, so the two cannot drift). A mount can only cover a name that exists,
 * so for each of these that is missing and denied, the runner creates an empty placeholder
 * directory for the run and mounts it read-only: writing the name fails with EISDIR, `mkdir`
 * with EEXIST, anything under it with EROFS. A directory, not a file, because an empty directory
 * is invisible to git: `git add -A` in the sandbox must not commit placeholders (with empty files
 * it did).
 * Patterns cannot be enumerated, so a name not listed here (say `sub/dir/new.pem`), or one in a
 * directory other than those of {@link placeholderCandidates}, is protected only if it exists
 * before the run.
 */
export const NEW_ENTRY_NAMES: readonly string[] = Object.freeze([...new Set([...ENV_NAMES, ...landingNames()])]);

/**
 * The candidate paths for new-entry placeholders: each listed name in the cwd and in each of its
 * ancestors up to the outermost writable root holding it (the project the command works in).
 * Other writable roots (toolchain caches, the session temp) get none: a dozen roots times these
 * names would be hundreds of mounts on every run.
 */
export function placeholderBases(policy: SandboxPolicy, cwd: string): string[] {
  const roots = policy.write.filter((r) => cwd === r || cwd.startsWith(r === '/' ? '/' : `${r}/`));
  if (roots.length === 0) return [];
  const top = roots.reduce((a, b) => (a.length <= b.length ? a : b));
  const bases: string[] = [];
  for (let p = cwd; ; p = p.slice(0, p.lastIndexOf('/')) || '/') {
    bases.push(p);
    if (p === top || p === '/') return bases;
  }
}

/** How deep under a writable root a denied `{ path }` rule still gets a placeholder (`~/.npm/_npx`, `~/.cache/gitstatus`). */
const PATH_RULE_DEPTH = 2;

function depthUnder(path: string, root: string): number | undefined {
  if (path === root || !path.startsWith(root === '/' ? '/' : `${root}/`)) return undefined;
  return path.slice(root === '/' ? 1 : root.length + 1).split('/').length;
}

/**
 * Every path a placeholder may be needed at, with the parents that must exist for it: each listed
 * name in each of {@link placeholderBases}, and each denied `{ path }` rule (a landing or the
 * control plane) that lies at most two levels under any writable root, so the executing parts of
 * toolchain caches (`~/.npm/_npx`, the prompt caches in `~/.cache`) are covered without a walk.
 */
export function placeholderCandidates(policy: SandboxPolicy, cwd: string): string[] {
  const out = new Set<string>();
  const add = (p: string) => {
    out.add(p);
    out.add(p.slice(0, p.lastIndexOf('/')) || '/');
  };
  for (const base of placeholderBases(policy, cwd)) {
    for (const name of NEW_ENTRY_NAMES) add(base === '/' ? `/${name}` : `${base}/${name}`);
  }
  for (const rule of [...policy.writeDeny, ...policy.controlDeny]) {
    if (!('path' in rule)) continue;
    if (policy.write.some((root) => (depthUnder(rule.path, root) ?? Number.POSITIVE_INFINITY) <= PATH_RULE_DEPTH)) add(rule.path);
  }
  return [...out];
}

import type { SandboxPolicy } from '@aalis/api-reach';

/**
 * Names whose creation inside a writable root is refused when the policy denies writing them:
 * the landings of the reach contract and the never-written secrets of the sandbox spec. A mount
 * can only cover a name that exists, so for each of these that is missing and denied, the runner
 * creates an empty placeholder directory for the run and mounts it read-only: writing the name
 * fails with EISDIR, `mkdir` with EEXIST, anything under it with EROFS. A directory, not a file,
 * because an empty directory is invisible to git: `git add -A` in the sandbox must not commit
 * placeholders (with empty files it did).
 * Patterns cannot be enumerated, so a name not listed here (say `sub/dir/new.pem`), or one in a
 * directory other than those of {@link placeholderCandidates}, is protected only if it exists
 * before the run.
 */
export const NEW_ENTRY_NAMES = [
  '.env',
  '.env.local',
  '.env.development',
  '.env.production',
  '.env.test',
  '.envrc',
  '.vscode',
  '.vscode/tasks.json',
  '.vscode/settings.json',
  '.claude',
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.cursor',
  '.codex',
  '.husky',
  '.aalis',
  '.mcp.json',
  '.pre-commit-config.yaml',
  'AALIS.md',
  'AGENTS.md',
  '.git/hooks',
  '.git/config',
  '.git/modules',
  '.gitconfig',
  '.bashrc',
  '.profile',
  '.bash_profile',
  '.zshrc',
  '.ssh',
  '.config',
] as const;

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

/** Every path a placeholder may be needed at, with the parents that must exist for it. */
export function placeholderCandidates(policy: SandboxPolicy, cwd: string): string[] {
  const out = new Set<string>();
  for (const base of placeholderBases(policy, cwd)) {
    for (const name of NEW_ENTRY_NAMES) {
      const p = base === '/' ? `/${name}` : `${base}/${name}`;
      out.add(p);
      out.add(p.slice(0, p.lastIndexOf('/')) || '/');
    }
  }
  return [...out];
}

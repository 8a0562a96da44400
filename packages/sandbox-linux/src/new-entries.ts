import type { SandboxPolicy } from '@aalis/api-reach';

/**
 * Names whose creation inside a writable root is refused when the policy denies writing them:
 * the landings of the reach contract and the never-written secrets of the sandbox spec. A mount
 * can only cover a name that exists, so for each of these that is missing and denied, the runner
 * creates an empty placeholder for the run and mounts it read-only. Patterns cannot be enumerated,
 * so a name not listed here (say `sub/dir/new.pem`) is protected only if it exists before the run.
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

/** Names that are directories where they exist; their placeholder is an empty directory. */
export const DIRECTORY_NAMES: ReadonlySet<string> = new Set([
  '.vscode',
  '.claude',
  '.cursor',
  '.codex',
  '.husky',
  '.aalis',
  'hooks',
  'modules',
  '.ssh',
  '.config',
  '.git',
]);

/** The placeholder kind for a missing path, by its last segment. */
export function placeholderKind(path: string): 'dir' | 'file' {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return DIRECTORY_NAMES.has(name) ? 'dir' : 'file';
}

/** The candidate paths for new-entry placeholders: each listed name under each writable root and the cwd. */
export function placeholderCandidates(policy: SandboxPolicy, cwd: string): string[] {
  const out = new Set<string>();
  for (const base of new Set([...policy.write, cwd])) {
    for (const name of NEW_ENTRY_NAMES) {
      const p = base === '/' ? `/${name}` : `${base}/${name}`;
      out.add(p);
      out.add(p.slice(0, p.lastIndexOf('/')) || '/');
    }
  }
  return [...out];
}

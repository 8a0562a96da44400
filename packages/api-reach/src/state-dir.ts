import { joinPath } from './path.js';

/**
 * The daemon's state outside any data directory: `$XDG_STATE_HOME/aalis` (an absolute
 * XDG_STATE_HOME; a relative one is ignored, as the XDG spec says), else `~/.local/state/aalis`.
 * It holds the registry of running daemons (each one's data directory and port: what every
 * `aalis` command reads to keep those directories from a sandboxed command) and the sandbox's
 * undone folder (what runs removed, and the command's versions of conflicting files). Both are
 * control plane and hidden from sandboxed commands (protected-lists.ts): a command whose
 * workspace was the home directory could rewrite the registry, or plant a symlink in the undone
 * folder that the next commit followed (found by an attack).
 */
export function aalisStateDir(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const state = env.XDG_STATE_HOME;
  return joinPath(state?.startsWith('/') ? state : joinPath(home, '.local/state'), 'aalis');
}

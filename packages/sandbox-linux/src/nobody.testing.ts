import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The unprivileged user the tests run the daemon's code as. */
export const NOBODY = 65534;

/**
 * `argv` run as {@link NOBODY}, with no supplementary groups. Node run so resolves the workspace's
 * packages from source (the `aalis-source` condition) whatever environment the caller passes: a
 * fresh clone has no `dist/`, and these children do not inherit the test runner's NODE_OPTIONS.
 */
export const asNobody = (...argv: string[]): string[] => {
  const [program, ...rest] = argv;
  const node = program === process.execPath ? [program, '--conditions=aalis-source', ...rest] : argv;
  return ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...node];
};

/**
 * Whether a test can run `child` as {@link NOBODY}: root with setpriv, and a checkout that
 * `nobody` can read (a clone under a private home cannot be).
 */
export function canRunAsNobody(child: string): boolean {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) return false;
  try {
    const [cmd, ...args] = asNobody('test', '-r', child);
    execFileSync(cmd!, args);
    return true;
  } catch {
    return false;
  }
}

import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where this CLI is installed, and in which form: a source checkout has `packages/`; in npm form
 * the install is the project whose `node_modules` holds this package (whatever the package
 * manager's layout below it: npm's flat one, pnpm's `.pnpm/…`).
 */
export function installOf(here: string = fileURLToPath(new URL('.', import.meta.url))): { dir: string; form: 'source' | 'npm' } {
  const cut = here.indexOf(`${sep}node_modules${sep}`);
  if (cut >= 0) return { dir: here.slice(0, cut) || sep, form: 'npm' };
  const checkout = resolve(here, '..', '..', '..');
  if (existsSync(join(checkout, 'packages', 'core'))) return { dir: checkout, form: 'source' };
  return { dir: resolve(here, '..', '..', '..', '..'), form: 'npm' };
}

/** The identity a person at this terminal has: the OS user, as the `cli` platform's owner. */
export function terminalIdentity(): { platform: 'cli'; userId: string } {
  return { platform: 'cli', userId: userInfo().username };
}

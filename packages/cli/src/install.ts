import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where this CLI is installed, and in which form (a source checkout has `packages/`). */
export function installOf(): { dir: string; form: 'source' | 'npm' } {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const checkout = resolve(here, '..', '..', '..');
  if (existsSync(join(checkout, 'packages', 'core'))) return { dir: checkout, form: 'source' };
  return { dir: resolve(here, '..', '..', '..', '..'), form: 'npm' };
}

/** The data directory: `--data`, else `$AALIS_DATA`, else `$XDG_DATA_HOME/aalis` (`~/.local/share/aalis`). */
export function dataDirOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return resolve(flag);
  if (env.AALIS_DATA) return resolve(env.AALIS_DATA);
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'aalis');
}

/** The identity a person at this terminal has: the OS user, as the `cli` platform's owner. */
export function terminalIdentity(): { platform: 'cli'; userId: string } {
  return { platform: 'cli', userId: userInfo().username };
}

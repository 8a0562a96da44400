import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where this CLI is installed, and in which form (a source checkout has `packages/`). */
export function installOf(): { dir: string; form: 'source' | 'npm' } {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const checkout = resolve(here, '..', '..', '..');
  if (existsSync(join(checkout, 'packages', 'core'))) return { dir: checkout, form: 'source' };
  return { dir: resolve(here, '..', '..', '..', '..'), form: 'npm' };
}

/** The identity a person at this terminal has: the OS user, as the `cli` platform's owner. */
export function terminalIdentity(): { platform: 'cli'; userId: string } {
  return { platform: 'cli', userId: userInfo().username };
}

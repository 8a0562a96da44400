import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';

/**
 * The docker instance name of a data directory: `<prefix>-<12 hex of the sha-256 of its real
 * path>`. Two daemons with different data directories never share one, and the same directory
 * (through any symlink) keeps its name across restarts. Throws when the directory does not exist.
 */
export function instanceNameOf(dataDir: string, prefix = 'daemon'): string {
  if (!/^[a-z0-9][a-z0-9_.-]{0,49}$/.test(prefix)) throw new Error(`instance prefix ${JSON.stringify(prefix)} must be 1-50 lower-case letters, digits, '_', '.', '-'`);
  const hash = createHash('sha256').update(realpathSync.native(dataDir)).digest('hex').slice(0, 12);
  return `${prefix}-${hash}`;
}

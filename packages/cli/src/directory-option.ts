import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './io.js';
import { lossyInputs, refuseLossyPath } from './lossy-inputs.js';

/**
 * A directory option (`given`: from argv) or the current directory, resolved. One whose bytes are
 * not UTF-8 is refused (lossy-inputs.ts): Node hands on U+FFFD for each such byte, which names
 * another directory, and that one was granted or run in. `/proc/self` is read only when a U+FFFD is there.
 */
export function directory(path: string, what: string, given: boolean, command = 'exec'): string {
  if (resolve(path).includes('\uFFFD')) {
    const inputs = lossyInputs();
    // `--opt=value` is one argv entry: its value is what was given
    const args = new Set([...inputs.args].flatMap((a) => [a, a.slice(a.indexOf('=') + 1)]));
    try {
      refuseLossyPath(what, given ? path : undefined, given ? 'arg' : 'cwd', { ...inputs, args });
    } catch (error) {
      // a bad argument, as a missing directory is (exit 2), never mistaken for the command's own exit 1
      throw new UsageError(`${(error as Error).message} ${(error as { fix?: string }).fix ?? ''}`.trim(), command);
    }
  }
  try {
    const real = realpathSync.native(resolve(path));
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
    return real;
  } catch {
    throw new UsageError(`${what} '${path}' is not an existing directory.`, command);
  }
}

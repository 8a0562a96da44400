import type { CliIo } from './io.js';

/** `aalis serve`: the daemon. */
export async function serveCommand(_argv: readonly string[], io: CliIo): Promise<number> {
  io.stderr('aalis serve: the daemon is not built yet.\n');
  return 1;
}

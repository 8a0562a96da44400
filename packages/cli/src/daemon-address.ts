import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readRegularSync } from '@aalis/core';
import { chooseDataDir } from './data-dir.js';
import { ownDir } from './own-dir.js';

/**
 * Takes the value options `names` (`--dir D`, `--dir=D`) out of `argv`, read by node's parser as
 * every command's flags are, and returns their values; the rest of `argv` (another parser's flags,
 * everything after `--`) is left in place, in order. A value may start with `-`. Throws when one
 * of them has no value.
 */
export function takeOptions<N extends string>(argv: string[], names: readonly N[]): Partial<Record<N, string>> {
  const options = Object.fromEntries(names.map((name) => [name, { type: 'string' as const }]));
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<N, string>> = {};
  const taken = new Set<number>();
  for (const token of tokens) {
    if (token.kind !== 'option' || !(names as readonly string[]).includes(token.name)) continue;
    if (token.value === undefined) throw new Error(`${token.rawName} needs a value`);
    values[token.name as N] = token.value;
    taken.add(token.index);
    if (!token.inlineValue) taken.add(token.index + 1);
  }
  const rest = argv.filter((_, i) => !taken.has(i));
  argv.splice(0, argv.length, ...rest);
  return values;
}

function readOr(file: string, what: string, fix = "is 'aalis serve' running for this deployment? Give --dir, --data or --url."): string {
  // never through a symlink, never a FIFO: the daemon writes these as regular files of its own
  const read = readRegularSync(file, { maxBytes: 4096 });
  if (read.kind === 'read') return read.bytes.toString('utf8').trim();
  if (read.kind === 'missing') throw new Error(`no ${what} at ${file}: ${fix}`);
  throw new Error(`the ${what} at ${file} was not read (${read.why}): the daemon writes it as a regular file of its own; remove it and start the daemon again.`);
}

/**
 * The running daemon a client command talks to: `--url` and `$AALIS_TOKEN`, else what `aalis
 * serve` wrote to `<data>/daemon/url` and `<data>/daemon/token` of the data directory that
 * `--data` / `--dir` / the current directory choose. Takes those flags out of `argv`.
 */
export function daemonAddressOf(argv: string[]): { url: string; token: string } {
  return daemonAddressFrom(takeOptions(argv, ['dir', 'data', 'url']));
}

/** {@link daemonAddressOf} from flags already taken out of the arguments (a command that looks the daemon up only when it needs it). */
export function daemonAddressFrom({ dir, data, url: given }: { readonly dir?: string; readonly data?: string; readonly url?: string }): { url: string; token: string } {
  const { dataDir } = chooseDataDir({ data, dir });
  // its token is sent to whatever address the url file names: a data directory another user may
  // change would take the owner's token wherever they like (found by an attack)
  if (given === undefined || !process.env.AALIS_TOKEN) ownDir(dataDir, 'the data directory', '--data DIR or another --dir', false);
  const url = given ?? readOr(join(dataDir, 'daemon', 'url'), 'daemon address');
  const token = process.env.AALIS_TOKEN || readOr(join(dataDir, 'daemon', 'token'), 'daemon token', given === undefined ? undefined : 'with --url, give the daemon\'s token in AALIS_TOKEN (it is in <data>/daemon/token of the daemon\'s data directory).');
  return { url, token };
}

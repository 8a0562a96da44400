import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chooseDataDir } from './data-dir.js';

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

function readOr(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new Error(`no ${what} at ${file}: is 'aalis serve' running for this deployment? Give --dir, --data or --url.`);
  }
}

/**
 * The running daemon a client command talks to: `--url` and `$AALIS_TOKEN`, else what `aalis
 * serve` wrote to `<data>/daemon/url` and `<data>/daemon/token` of the data directory that
 * `--data` / `--dir` / the current directory choose. Takes those flags out of `argv`.
 */
export function daemonAddressOf(argv: string[]): { url: string; token: string } {
  const { dir, data, url: given } = takeOptions(argv, ['dir', 'data', 'url']);
  const { dataDir } = chooseDataDir({ data, dir });
  const url = given ?? readOr(join(dataDir, 'daemon', 'url'), 'daemon address');
  const token = process.env.AALIS_TOKEN || readOr(join(dataDir, 'daemon', 'token'), 'daemon token');
  return { url, token };
}

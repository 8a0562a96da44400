import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chooseDataDir } from './data-dir.js';

/** Removes `flag VALUE` from `argv` and returns the value, or `undefined` when the flag is absent. */
export function takeFlag(argv: string[], flag: string): string | undefined {
  const at = argv.indexOf(flag);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith('-')) throw new Error(`${flag} needs a value`);
  argv.splice(at, 2);
  return value;
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
  const dir = takeFlag(argv, '--dir');
  const data = takeFlag(argv, '--data');
  const given = takeFlag(argv, '--url');
  const { dataDir } = chooseDataDir({ data, dir });
  const url = given ?? readOr(join(dataDir, 'daemon', 'url'), 'daemon address');
  const token = process.env.AALIS_TOKEN || readOr(join(dataDir, 'daemon', 'token'), 'daemon token');
  return { url, token };
}

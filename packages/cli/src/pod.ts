import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { podCommand } from '@aalis/plugin-pod';
import { chooseDataDir } from './data-dir.js';
import type { CliIo } from './io.js';
import { podClient } from './pod-client.js';

const HELP = `aalis pod: the Isolation Pod of a running daemon

Usage: aalis pod [--dir DEPLOYMENT_DIR | --data DIR | --url URL] <command> [options]

Talks to the daemon started with 'aalis serve' in the deployment directory (default the current
directory): its address and token are read from <data>/daemon/url and <data>/daemon/token, or
given with --url and $AALIS_TOKEN. Run 'aalis pod help' for the pod's commands
(run, list, show, logs, files, return, export, confirm, exports, undo, grants, revoke, clean,
expire, root).
`;

function take(argv: string[], flag: string): string | undefined {
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

/** `aalis pod`: the pod's commands, run by the daemon through its API. */
export async function podCliCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = [...argv];
  if (args[0] === '--help' || args[0] === '-h' || args.length === 0) {
    io.stdout(HELP);
    return 0;
  }
  let url: string;
  let token: string;
  try {
    const dir = take(args, '--dir');
    const data = take(args, '--data');
    const given = take(args, '--url');
    const { dataDir } = chooseDataDir({ data, dir });
    url = given ?? readOr(join(dataDir, 'daemon', 'url'), "daemon address");
    token = process.env.AALIS_TOKEN || readOr(join(dataDir, 'daemon', 'token'), 'daemon token');
  } catch (error) {
    io.stderr(`aalis pod: ${(error as Error).message}\n`);
    return 2;
  }
  return podCommand(args, io, podClient(url, token));
}

import { readErrorEnvelope } from '@aalis/core';
import { daemonAddressFrom, takeOptions } from './daemon-address.js';
import { daemonCall } from './daemon-request.js';
import type { CliIo } from './io.js';
import { forTerminalLine } from './terminal-text.js';

const HELP = `aalis console: a new address that opens the web console of a running daemon

Usage: aalis console [--dir DEPLOYMENT_DIR | --data DIR | --url URL]

Prints the console's address with a one-time code in it (…/console#code=<id>.<key>). It opens
the console once, within 30 minutes; the tab that opened it keeps working (a reload too), and
another tab, browser or person needs a new address. The daemon's token itself is never put in an
address: a browser keeps every address it opened (its history, a synced profile), and a daemon's
output is often kept (a service's journal), so the address 'aalis serve' prints at start is one
of these too. The console is served to this machine only.

The daemon's address and token come from <data>/daemon/url and <data>/daemon/token, or --url and
$AALIS_TOKEN; the token goes only to a server that proves it knows it.
`;

/** `aalis console`: asks the running daemon for a new one-time console address and prints it. */
export async function consoleCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = [...argv];
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(HELP);
    return 0;
  }
  let address: { url: string; token: string };
  try {
    // the arguments first: an unknown one is the mistake to name, not the daemon it then found none of
    const flags = takeOptions(args, ['dir', 'data', 'url']);
    if (args.length > 0) throw new Error(`unknown argument '${forTerminalLine(args[0]!)}'; the options are --dir, --data and --url ('aalis console --help').`);
    if (flags.url !== undefined && !URL.canParse(flags.url)) throw new Error(`--url '${forTerminalLine(flags.url)}' is not an address (http://127.0.0.1:8787, say).`);
    address = daemonAddressFrom(flags);
  } catch (error) {
    const fix = (error as { fix?: unknown }).fix;
    io.stderr(`aalis console: ${(error as Error).message}\n${typeof fix === 'string' ? `fix: ${fix}\n` : ''}`);
    return 2;
  }
  const { ok, status, body } = await daemonCall(address.url, address.token, 'POST', '/api/console/address');
  const answer = body as { address?: unknown; expiresAt?: unknown } | undefined;
  if (!ok || typeof answer?.address !== 'string') {
    const error = readErrorEnvelope(body);
    const why = error ? error.message : `it answered ${status}${status === 404 ? ' (it may be older than this command: restart it)' : ''}.`;
    io.stderr(`aalis console: the daemon gave no address: ${why}\n${error?.fix ? `fix: ${error.fix}\n` : ''}`);
    return 1;
  }
  // the address is the daemon's own (the one it listens on, as it printed at start)
  io.stdout(`${forTerminalLine(answer.address)}\n`);
  if (typeof answer.expiresAt === 'number') io.stderr(`it opens the console once, until ${new Date(answer.expiresAt).toLocaleTimeString()}\n`);
  return 0;
}

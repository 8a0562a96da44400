import { parseArgs } from 'node:util';
import { readErrorEnvelope } from '@aalis/core';
import { daemonAddressFrom, takeOptions } from './daemon-address.js';
import { daemonCall } from './daemon-request.js';
import type { CliIo } from './io.js';
import { forTerminalLine } from './terminal-text.js';

const HELP = `aalis adapter: the tokens of a running daemon's chat adapters

Usage: aalis adapter [--dir DEPLOYMENT_DIR | --data DIR | --url URL] <command>

Commands:
  list                                 the adapters, with their platforms
  add NAME --platform P [--replace]    a new adapter bound to platform P; prints its token once
                                       (--replace: a new token for NAME, its old one stops working)
  remove NAME                          its token stops working now

An adapter (a chat bridge) sends turns and tool calls with its own token, not the daemon's. The
daemon takes from it only turns of its platform, naming only that platform's identities, in
conversations named '<platform>:<id>' that began on that platform; its event stream, pending asks, grants and
conversation lists hold only those; it answers an ask or changes a setting only naming (by) an
identity of its platform, which the daemon then checks is an owner's. The console, the audit log,
the Isolation Pod and this command stay the owner's. The daemon keeps a digest of each token,
never the token: keep the one printed here where the adapter reads it (mode 0600).

The daemon's address and token come from <data>/daemon/url and <data>/daemon/token, or --url and
$AALIS_TOKEN; the token goes only to a server that proves it knows it.
`;

interface AdapterView {
  readonly name: string;
  readonly platform: string;
  readonly created: string;
}

/** `aalis adapter`: lists, adds and removes a running daemon's adapter tokens. */
export async function adapterCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = [...argv];
  if (args.length === 0 || args.includes('--help') || args.includes('-h') || args[0] === 'help') {
    io.stdout(HELP);
    return 0;
  }
  const fail = (message: string, fix?: string, code = 2) => {
    io.stderr(`aalis adapter: ${message}\n${fix ? `fix: ${fix}\n` : ''}`);
    return code;
  };
  let address: { url: string; token: string };
  let command: string;
  let name: string | undefined;
  let platform: string | undefined;
  let replace = false;
  try {
    const flags = takeOptions(args, ['dir', 'data', 'url']);
    const parsed = parseArgs({ args, allowPositionals: true, options: { platform: { type: 'string' }, replace: { type: 'boolean' } } });
    [command = '', name] = parsed.positionals;
    platform = parsed.values.platform;
    replace = parsed.values.replace === true;
    const extra = parsed.positionals.slice(command === 'list' ? 1 : 2);
    if (!['list', 'add', 'remove'].includes(command)) return fail(`unknown command '${forTerminalLine(command)}'; the commands are list, add and remove ('aalis adapter --help').`);
    if (extra.length > 0) return fail(`unexpected argument '${forTerminalLine(extra[0]!)}' ('aalis adapter --help').`);
    if (command !== 'list' && name === undefined) return fail(`'${command}' needs the adapter's name ('aalis adapter ${command} NAME${command === 'add' ? ' --platform P' : ''}').`);
    if (command === 'add' && platform === undefined) return fail("'add' needs the platform the adapter speaks for: --platform P (telegram, say).");
    if (command !== 'add' && (platform !== undefined || replace)) return fail('--platform and --replace go with add only.');
    address = daemonAddressFrom(flags);
  } catch (error) {
    const fix = (error as { fix?: unknown }).fix;
    return fail((error as Error).message, typeof fix === 'string' ? fix : undefined);
  }
  const request =
    command === 'list'
      ? daemonCall(address.url, address.token, 'GET', '/api/adapters')
      : command === 'add'
        ? daemonCall(address.url, address.token, 'POST', '/api/adapters', { name, platform, ...(replace ? { replace } : {}) })
        : daemonCall(address.url, address.token, 'POST', '/api/adapters/remove', { name });
  const { ok, status, body } = await request;
  if (!ok) {
    const error = readErrorEnvelope(body);
    return fail(error ? forTerminalLine(error.message) : `the daemon answered ${status}${status === 404 ? ' (it may be older than this command: restart it)' : ''}.`, error?.fix, 1);
  }
  if (command === 'list') {
    const adapters = (body as { adapters: AdapterView[] }).adapters;
    if (adapters.length === 0) io.stdout("no adapters: add one with 'aalis adapter add NAME --platform P'\n");
    for (const a of adapters) io.stdout(`${forTerminalLine(a.name)}\tplatform ${forTerminalLine(a.platform)}\ttoken made ${forTerminalLine(a.created)}\n`);
  } else if (command === 'add') {
    const { adapter, token } = body as { adapter: AdapterView; token: string };
    // the token alone on stdout, so `aalis adapter add … > file` keeps nothing else
    io.stdout(`${token}\n`);
    io.stderr(`adapter '${forTerminalLine(adapter.name)}' speaks for platform '${forTerminalLine(adapter.platform)}'; its token (above) is shown this once: give it to the adapter as 'Authorization: Bearer <token>'\n`);
  } else {
    io.stderr(`adapter '${forTerminalLine(name!)}' removed: its token no longer opens the daemon\n`);
  }
  return 0;
}

import { closeSync, constants, fstatSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
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
  add NAME --platform P [--replace] [--out FILE]
                                       a new adapter bound to platform P; prints its token once
                                       (--replace: a new token for NAME, its old one stops working;
                                       --out FILE: writes it to FILE instead, a new file of mode
                                       0600; an existing file or a symlink there is refused)
  remove NAME                          its token stops working now

An adapter (a chat bridge) sends turns and tool calls with its own token, not the daemon's. The
daemon takes from it only turns of its platform, naming only that platform's identities, in
conversations named '<platform>:<id>' that began on that platform; its event stream, pending asks, grants and
conversation lists hold only those; it answers an ask or changes a setting only naming (by) an
identity of its platform, which the daemon then checks is an owner's. The console, the audit log,
the Isolation Pod and this command stay the owner's. The daemon keeps a digest of each token,
never the token: keep it where only the adapter reads it (mode 0600): use --out FILE, as a shell's
'> FILE' makes the file readable by every local user (mode 0644 under the usual umask).

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
  let out: string | undefined;
  try {
    const flags = takeOptions(args, ['dir', 'data', 'url']);
    const parsed = parseArgs({ args, allowPositionals: true, options: { platform: { type: 'string' }, replace: { type: 'boolean' }, out: { type: 'string' } } });
    [command = '', name] = parsed.positionals;
    platform = parsed.values.platform;
    replace = parsed.values.replace === true;
    out = parsed.values.out;
    const extra = parsed.positionals.slice(command === 'list' ? 1 : 2);
    if (!['list', 'add', 'remove'].includes(command)) return fail(`unknown command '${forTerminalLine(command)}'; the commands are list, add and remove ('aalis adapter --help').`);
    if (extra.length > 0) return fail(`unexpected argument '${forTerminalLine(extra[0]!)}' ('aalis adapter --help').`);
    if (command !== 'list' && name === undefined) return fail(`'${command}' needs the adapter's name ('aalis adapter ${command} NAME${command === 'add' ? ' --platform P' : ''}').`);
    if (command === 'add' && platform === undefined) return fail("'add' needs the platform the adapter speaks for: --platform P (telegram, say).");
    if (command !== 'add' && (platform !== undefined || replace || out !== undefined)) return fail('--platform, --replace and --out go with add only.');
    if (out === '') return fail('--out needs the name of a new file for the token (--out tg-bridge.token).');
    address = daemonAddressFrom(flags);
  } catch (error) {
    const fix = (error as { fix?: unknown }).fix;
    return fail((error as Error).message, typeof fix === 'string' ? fix : undefined);
  }
  // made before the token is asked for: a file refused changes nothing at the daemon
  let outFd: number | undefined;
  if (out !== undefined) {
    try {
      outFd = openNewPrivate(out);
    } catch (error) {
      return fail(forTerminalLine((error as Error).message), (error as { fix?: string }).fix, 1);
    }
  }
  const request =
    command === 'list'
      ? daemonCall(address.url, address.token, 'GET', '/api/adapters')
      : command === 'add'
        ? daemonCall(address.url, address.token, 'POST', '/api/adapters', { name, platform, ...(replace ? { replace } : {}) })
        : daemonCall(address.url, address.token, 'POST', '/api/adapters/remove', { name });
  const { ok, status, body } = await request.catch((error: unknown) => {
    if (outFd !== undefined) dropNew(outFd, out!);
    throw error;
  });
  if (!ok && outFd !== undefined) dropNew(outFd, out!);
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
    const speaks = `adapter '${forTerminalLine(adapter.name)}' speaks for platform '${forTerminalLine(adapter.platform)}'`;
    if (outFd !== undefined) {
      try {
        const line = Buffer.from(`${token}\n`);
        for (let at = 0; at < line.length; ) at += writeSync(outFd, line, at);
        fsyncSync(outFd); // on disk before it is said to be there: the daemon has the new token already
      } catch (error) {
        // the daemon holds the new token (a replaced one is revoked already), the file does not: said, with what to do
        io.stderr(`${speaks}, but its token could not be written to ${forTerminalLine(out!)} (${(error as Error).message}); it is shown nowhere else, so the adapter has no working token now.\nfix: free the space or choose another place, then make a new one: 'aalis adapter add ${forTerminalLine(adapter.name)} --platform ${forTerminalLine(adapter.platform)} --replace --out FILE'\n`);
        return 1;
      } finally {
        closeSync(outFd);
      }
      io.stderr(`${speaks}; its token is in ${forTerminalLine(out!)} (mode 0600), and nowhere else: give it to the adapter as 'Authorization: Bearer <token>'\n`);
      return 0;
    }
    // the token alone on stdout, so `aalis adapter add … > file` keeps nothing else
    io.stdout(`${token}\n`);
    io.stderr(`${speaks}; its token (above) is shown this once: give it to the adapter as 'Authorization: Bearer <token>'\n`);
    const readable = othersReadStdout();
    if (readable !== undefined) {
      io.stderr(`warning: the token went to a file other users can read (mode ${readable.toString(8).padStart(4, '0')}): anyone who reads it acts as this adapter.\nfix: chmod 600 that file now, or make the token with --out FILE (a new file of mode 0600) ('aalis adapter add ${forTerminalLine(adapter.name)} --platform ${forTerminalLine(adapter.platform)} --replace --out FILE')\n`);
    }
  } else {
    io.stderr(`adapter '${forTerminalLine(name!)}' removed: its token no longer opens the daemon\n`);
  }
  return 0;
}

/**
 * Opens `file` as a new file of mode 0600 for the token. A shell's `> file` made it 0644 under the
 * usual umask, readable by every local user (found by an attack); an existing file would keep its
 * mode and owner, and a symlink would take the token wherever it points, so either is refused.
 */
function openNewPrivate(file: string): number {
  try {
    return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' || code === 'ELOOP'
        ? 'something is there already (a file or a symlink), and the token goes only into a new file, never over or through one'
        : `it could not be made (${code ?? (error as Error).message})`;
    throw Object.assign(new Error(`the token was not asked for: --out ${file} was refused, as ${why}; nothing was changed.`), {
      fix: code === 'EEXIST' || code === 'ELOOP' ? 'name a file that does not exist yet, or remove that one first' : 'name a new file in a directory you can write',
    });
  }
}

/** Closes and removes the file {@link openNewPrivate} made, when no token came to fill it. */
function dropNew(fd: number, file: string): void {
  closeSync(fd);
  try {
    unlinkSync(file);
  } catch {
    // already gone: nothing to tidy
  }
}

/** The permission bits of standard output when it is a regular file others may read, else `undefined`. */
function othersReadStdout(): number | undefined {
  try {
    // bigint: see process-io.ts (a plain fstat of a pipe misleads node's next module resolution)
    const stat = fstatSync(1, { bigint: true });
    return stat.isFile() && (stat.mode & 0o077n) !== 0n ? Number(stat.mode & 0o777n) : undefined;
  } catch {
    return undefined;
  }
}

import { podCommand } from '@aalis/plugin-pod';
import { daemonAddressFrom, takeOptions } from './daemon-address.js';
import type { CliIo } from './io.js';
import { podClient } from './pod-client.js';
import { forTerminalAsJson } from './terminal-text.js';

const HELP = `aalis pod: the Isolation Pod of a running daemon

Usage: aalis pod [--dir DEPLOYMENT_DIR | --data DIR | --url URL] <command> [options]

Talks to the daemon started with 'aalis serve' in the deployment directory (default: the
nearest of the current directory and its ancestors that holds aalis.config.json): its address
and token are read from <data>/daemon/url and <data>/daemon/token, or given with --url and
$AALIS_TOKEN. Run 'aalis pod help' for the pod's commands (no daemon needed for the help)
(run, list, show, logs, files, return, export, confirm, exports, undo, grants, revoke, clean,
expire, root).
`;

/** `aalis pod`: the pod's commands, run by the daemon through its API. */
export async function podCliCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = [...argv];
  if (args[0] === '--help' || args[0] === '-h' || args.length === 0) {
    io.stdout(HELP);
    return 0;
  }
  let flags: ReturnType<typeof takeOptions<'dir' | 'data' | 'url'>>;
  try {
    flags = takeOptions(args, ['dir', 'data', 'url']);
  } catch (error) {
    io.stderr(`aalis pod: ${(error as Error).message}\n`);
    return 2;
  }
  // What the pod prints comes from a task (its model's replies, its files' names, its commands'
  // output): control characters are shown as escapes, in a form that keeps --json valid.
  const shown = { ...io, stdout: (s: string) => io.stdout(forTerminalAsJson(s)), stderr: (s: string) => io.stderr(forTerminalAsJson(s)) };
  return podCommand(args, shown, podClient(() => daemonAddressFrom(flags)));
}

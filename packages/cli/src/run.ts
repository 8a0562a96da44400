// No package at the top: `aalis --help` and `--version` must load none (core brings zod, which
// alone doubled the start-up of --help); guarded.ts loads what the error path needs when it runs.
import { type Command, runGuarded } from './guarded.js';
import type { CliIo } from './io.js';

export type { CliIo } from './io.js';

const VERSION = '0.1.0';

export const HELP = `aalis: decide and enforce what an agent's tool calls may touch

Usage: aalis <command> [options]

Commands:
  exec      run one command under an owner's reach, in the platform sandbox
  explain   say why a read, write, exec or network request is allowed, asked or refused
  policy    print the sandbox policy and its translation for a backend
  doctor    check what works on this machine, with the command that fixes what does not
  serve     run the daemon: the HTTP API for adapters and the web console
  console   a new one-time address that opens a running daemon's web console
  pod       the Isolation Pod of a running daemon: side tasks, returns, exports
  chat      talk to the agent of a running daemon: streaming replies, asks answered at the prompt
  adapter   the tokens of a running daemon's chat adapters, each bound to one platform

Run 'aalis <command> --help' for a command's options.

Options:
  -h, --help     this help
  -v, --version  the version
`;

// Each command's module graph loads only when that command runs: `aalis --help` reads none of them.
const COMMANDS: Record<string, () => Promise<Command>> = {
  exec: async () => (await import('./exec.js')).execCommand,
  explain: async () => (await import('./explain.js')).explainCommand,
  policy: async () => (await import('./policy.js')).policyCommand,
  doctor: async () => (await import('./doctor.js')).doctorCommand,
  serve: async () => (await import('./serve.js')).serveCommand,
  console: async () => (await import('./console-address.js')).consoleCommand,
  pod: async () => (await import('./pod.js')).podCliCommand,
  chat: async () => (await import('./chat.js')).chatCommand,
  adapter: async () => (await import('./adapter.js')).adapterCommand,
};

/** Runs the CLI with `argv` (without node and the script) and returns the exit status. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    io.stdout(HELP);
    return 0;
  }
  if (first === '-v' || first === '--version') {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const load = COMMANDS[first];
  if (!load) {
    io.stderr(`aalis: unknown command '${first}'. The commands are: ${Object.keys(COMMANDS).join(', ')}. Run 'aalis --help'.\n`);
    return 2;
  }
  return await runGuarded(first, async (args, out) => (await load())(args, out), rest, io);
}

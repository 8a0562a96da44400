/** Where the CLI writes; passed in so tests read what a person would see. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const HELP = `aalis: decide and enforce what an agent's tool calls may touch

Usage: aalis <command> [options]

Commands (being built; see the project README):
  exec      run one command under an owner's reach, in the platform sandbox
  explain   say why a read, write, exec or network request is allowed, asked or denied
  policy    print the sandbox policy and its translation for a backend
  doctor    check what works on this machine
  serve     run the daemon

Options:
  -h, --help     show this help
  -v, --version  show the version
`;

/** Runs the CLI with `argv` (without node and the script) and returns the exit status. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    io.stdout(HELP);
    return 0;
  }
  if (first === '-v' || first === '--version') {
    io.stdout('0.1.0\n');
    return 0;
  }
  io.stderr(`aalis: unknown command '${first}'. Run 'aalis --help' for the commands there are.\n`);
  return 2;
}

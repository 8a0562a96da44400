import type { CliIo } from './io.js';

/** A subcommand: its arguments (after its name) in, its exit status out. */
export type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

/**
 * Runs subcommand `name` and turns what it throws into the CLI's answer: a usage error is printed
 * with a pointer to its `--help` (exit 2), a path or argument refused for its bytes (`bad-path`)
 * too, anything else as its message (exit 1), never a stack trace. What the error path needs is loaded only when it runs.
 */
export async function runGuarded(name: string, command: Command, argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await command(argv, io);
  } catch (error) {
    const [{ UsageError }, { errorText }] = await Promise.all([import('./io.js'), import('@aalis/core')]);
    if (error instanceof UsageError) {
      io.stderr(`aalis ${error.command}: ${error.message}\nRun 'aalis ${error.command} --help' for the options.\n`);
      return 2;
    }
    io.stderr(`aalis ${name}: ${errorText(error)}\n`);
    // an argument refused for its bytes is a bad value, as the README's exit codes have it
    return (error as { code?: unknown }).code === 'bad-path' ? 2 : 1;
  }
}

import { AalisError } from '@aalis/core';

/** Where the CLI writes and reads; passed in so tests see what a person would. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Asks a question on the terminal and returns the answer, or `undefined` without a terminal. */
  ask?(question: string): Promise<string | undefined>;
  /** Reads all of standard input (for `exec --stdin`). */
  readStdin?(): Promise<string>;
  /** Standard input line by line, as typed (for `aalis chat`). */
  lines?(): AsyncIterable<string>;
  /**
   * Where an interrupt of the person's command comes from when it is not this process's own
   * SIGINT or SIGTERM (a client of the exec helper, exec-server.ts): `handler` is called with the
   * signal the client received; the returned function stops listening.
   */
  onInterrupt?(handler: (signal: NodeJS.Signals) => void): () => void;
}

/** A usage error: the CLI prints it with a pointer to `--help` and exits 2. */
export class UsageError extends AalisError<'usage'> {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly command: string,
  ) {
    super('usage', message, { fix: `run 'aalis ${command} --help' for the options` });
  }
}

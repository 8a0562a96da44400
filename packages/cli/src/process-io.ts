import { createInterface } from 'node:readline/promises';
import type { CliIo } from './io.js';

/**
 * This process's terminal as a {@link CliIo}: stdout and stderr, questions at the terminal when
 * both stdin and stderr are one, stdin line by line or whole. A reader that went away
 * (`aalis exec -- seq 1 100000 | head -1`) ends our output quietly: not a stack trace, and the
 * command's own status still decides the exit.
 */
export function processIo(): CliIo {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    ...(interactive
      ? {
          async ask(question: string) {
            const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
            try {
              return await rl.question(question);
            } catch {
              return undefined;
            } finally {
              rl.close();
            }
          },
        }
      : {}),
    lines: () => createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }),
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/**
 * Ends the process with `status` once stdout and stderr are flushed. An open standard input (a
 * pipe that `aalis chat` stopped reading at /quit) must not keep it alive, nor must what a command
 * started for later runs and has stopped using: the sandbox's walk thread and tree watcher are a
 * daemon's, and waiting for the process to wind them down cost a one-shot `aalis exec` most of a
 * second. Everything the command owed (its output, the audit log, the overlay's commit) was done
 * before the command returned.
 */
export async function exitWith(status: number): Promise<never> {
  process.stdin.destroy();
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
  process.exit(status);
}

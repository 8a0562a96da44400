import { createInterface } from 'node:readline/promises';
import { run } from './run.js';

const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;

const status = await run(process.argv.slice(2), {
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
});
// Done: an open standard input (a pipe that `aalis chat` stopped reading at /quit) must not keep the process alive.
process.stdin.destroy();
// Nor must what a command started for later runs and has stopped using: the sandbox's walk thread
// and tree watcher are a daemon's, and waiting for the process to wind them down cost a one-shot
// `aalis exec` most of a second. Everything the command owed (its output, the audit log, the
// overlay's commit) was done before run() returned; the output is flushed before the exit.
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
process.exit(status);

import { createInterface } from 'node:readline/promises';
import { run } from './run.js';

const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  ...(interactive
    ? {
        async ask(question: string) {
          const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
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
});

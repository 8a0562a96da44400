import { fstatSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import type { CliIo } from './io.js';

/**
 * The streams that could not be written, and why (a full disk, an I/O error; a reader that went
 * away, EPIPE, is not one): {@link exitWith} says so and does not exit 0.
 */
const lost = new Map<'stdout' | 'stderr', string>();

/** Notes why `name` could not be written; a reader gone (EPIPE) is not noted. */
function note(name: 'stdout' | 'stderr', error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE' && !lost.has(name)) lost.set(name, `${error.code ?? 'error'}: ${error.message.replace(/^\w+: /, '')}`);
}

/**
 * A writer of `name`. To a regular file it writes with write(2) until every byte is written:
 * node's own stream for a file ignores a short write, so a disk that filled up partway through
 * lost the rest of `aalis exec -- seq 1 100000 > out` with no error and exit 0 (found by a
 * review). Anything else (a pipe, a terminal, a device) goes through node's stream, whose errors
 * are noted. bin/exec-client.cjs `emit` does the same for runs through the exec helper.
 */
function writerOf(name: 'stdout' | 'stderr'): (text: string) => void {
  const fd = name === 'stdout' ? 1 : 2;
  let file = false;
  try {
    // bigint: a plain fstat of a pipe or socket is left in node's shared stat buffer, and the next
    // module resolution then takes pnpm's symlinked packages for real folders (nodejs/node#51142:
    // `aalis doctor | cat` found no execa, and said the linux sandbox did not work)
    file = fstatSync(fd, { bigint: true }).isFile();
  } catch {
    // no such descriptor: node's stream says so when it is written
  }
  return (text) => {
    // nothing to write is not written: /dev/full refuses even an empty write
    if (text.length === 0 || lost.has(name)) return;
    if (!file) {
      process[name].write(text);
      return;
    }
    const bytes = Buffer.from(text);
    try {
      for (let at = 0; at < bytes.length; ) {
        const wrote = writeSync(fd, bytes, at);
        if (wrote <= 0) throw Object.assign(new Error('the write took no byte'), { code: 'EIO' });
        at += wrote;
      }
    } catch (error) {
      note(name, error as NodeJS.ErrnoException);
    }
  };
}

/**
 * This process's terminal as a {@link CliIo}: stdout and stderr, questions at the terminal when
 * both stdin and stderr are one, stdin line by line or whole. A reader that went away
 * (`aalis exec -- seq 1 100000 | head -1`) ends our output quietly: not a stack trace, and the
 * command's own status still decides the exit. Output that could not be written for another
 * reason (`> /dev/full`) is said at the exit instead (see {@link exitWith}).
 */
export function processIo(): CliIo {
  for (const name of ['stdout', 'stderr'] as const) process[name].on('error', (error: NodeJS.ErrnoException) => note(name, error));
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  return {
    stdout: writerOf('stdout'),
    stderr: writerOf('stderr'),
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
 * before the command returned. Output lost for another reason than a reader gone (`> /dev/full`:
 * ENOSPC) is said on stderr, and a status of 0 becomes 1 (stderr's own loss changes nothing).
 */
export async function exitWith(status: number): Promise<never> {
  process.stdin.destroy();
  // only what is still queued: an empty write to a device that takes nothing (/dev/full) fails,
  // and said output was lost where none was written (found by a review)
  const flushed = () => Promise.all([process.stdout, process.stderr].filter((stream) => stream.writableLength > 0).map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
  await flushed();
  const stdout = lost.get('stdout');
  if (stdout !== undefined && !lost.has('stderr')) {
    writerOf('stderr')(`aalis: output could not be written to stdout (${stdout}); what was not written is lost${status === 0 ? ', so the exit status is 1' : ''}\n`);
    await flushed();
  }
  // a full disk under `> report.txt` is not a success, whatever the command did; a note that could
  // not reach stderr changes nothing the caller reads
  process.exit(stdout !== undefined && status === 0 ? 1 : status);
}

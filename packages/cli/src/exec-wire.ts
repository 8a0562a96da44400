import { z } from 'zod';

/*
 * What `aalis exec` and its helper (exec-server.ts) say to each other over the helper's socket: one
 * JSON object a line, each way. The client side is bin/exec-client.cjs (plain JavaScript, so that a
 * run through the helper loads nothing of the bundle); exec-server.test.ts runs the two together.
 *
 * client → helper: its token, the request, `go` once it is accepted, then signals, standard input
 * (when asked) and answers.
 * helper → client: `accepted` or `declined` with why. The command starts only on the client's `go`,
 * which a client sends only while it has not given up waiting: so a command runs in the helper or
 * in the client, never both (a client that sees the connection close before `accepted` knows
 * nothing ran and runs the command itself). Then output, questions, a request for standard input,
 * and the exit status last.
 */

/**
 * The first line a client sends: the token the helper was started with, read from its environment
 * (/proc/<pid>/environ), which no sandboxed command can read. Alone on a short line, so that what
 * a connection without it can make the helper read and parse is {@link TOKEN_LINE_BYTES}.
 */
export const TokenLineSchema = z.strictObject({ token: z.string().max(128) });

/** The longest first line (the token's) the helper reads. */
export const TOKEN_LINE_BYTES = 256;
/** The longest request line the helper reads (arguments and environment: the kernel's ARG_MAX is 2 MiB). */
export const REQUEST_LINE_BYTES = 16 << 20;

/** The second line a client sends: everything of its process that a one-shot `aalis exec` would read. */
export const ExecRequestSchema = z.strictObject({
  v: z.literal(1),
  /** The client's bundle place, node and user ids (bin/exec-client.cjs helperWho): a helper started with other ones declines. */
  who: z.string(),
  /** `aalis exec`'s arguments, after `exec`. */
  argv: z.array(z.string()),
  cwd: z.string().startsWith('/'),
  env: z.record(z.string(), z.string()),
  umask: z.number().int().min(0).max(0o777),
  /** Whether its stdin and stderr are a terminal (questions are asked only then). */
  interactive: z.boolean(),
});
/** {@link ExecRequestSchema}'s type. */
export type ExecRequest = z.infer<typeof ExecRequestSchema>;

/** The signals a client passes on (its own SIGINT or SIGTERM; `SIGHUP` stands for a client gone). */
export const PASSED_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** What a client sends after its request. */
export const ClientFrameSchema = z.discriminatedUnion('t', [
  /** After `accepted`: the helper may start the command (a client that gave up waiting sends none, and runs it itself). */
  z.strictObject({ t: z.literal('go') }),
  z.strictObject({ t: z.literal('signal'), signal: z.enum(PASSED_SIGNALS) }),
  z.strictObject({ t: z.literal('stdin'), data: z.string() }),
  z.strictObject({ t: z.literal('answer'), id: z.number().int(), answer: z.string().nullable() }),
]);
/** {@link ClientFrameSchema}'s type. */
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

/** What the helper sends. */
export type HelperFrame =
  | { readonly t: 'accepted'; readonly pid: number }
  | { readonly t: 'declined'; readonly why: string }
  | { readonly t: 'out'; readonly data: string }
  | { readonly t: 'err'; readonly data: string }
  | { readonly t: 'ask'; readonly id: number; readonly question: string }
  | { readonly t: 'stdin' }
  | { readonly t: 'exit'; readonly status: number };

/** The longest line the helper reads once it took a request (a whole standard input is one line). */
export const MAX_LINE_BYTES = 256 << 20;

/**
 * Splits a byte stream into lines and hands each to `onLine`, which returns false to read no more;
 * `onTooLong` (and nothing more is read) once a line passes `limit()`, asked as bytes come, so a
 * reader can allow longer lines as it learns more of its peer. Text is decoded as UTF-8 once a line
 * is whole (a character is never split).
 */
export function lineReader(onLine: (line: string) => boolean, onTooLong: () => void, limit: () => number): (chunk: Buffer) => void {
  let parts: Buffer[] = [];
  let size = 0;
  let done = false;
  return (chunk) => {
    let from = 0;
    while (!done) {
      const nl = chunk.indexOf(10, from);
      const end = nl === -1 ? chunk.length : nl;
      size += end - from;
      if (size > limit()) {
        done = true;
        parts = [];
        onTooLong();
        return;
      }
      if (nl === -1) {
        if (from < chunk.length) parts.push(chunk.subarray(from));
        return;
      }
      parts.push(chunk.subarray(from, nl));
      const line = Buffer.concat(parts).toString('utf8');
      parts = [];
      size = 0;
      from = nl + 1;
      if (!onLine(line)) done = true;
    }
  };
}

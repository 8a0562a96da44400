import { z } from 'zod';

/**
 * An error as it crosses a boundary (an HTTP answer, `--json` output, a log line): the stable
 * `code` a program branches on, the `message` a person reads, and what they can do (`fix`).
 */
export const ErrorJsonSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
  fix: z.string().optional(),
});
/** The JSON form of an error; see {@link ErrorJsonSchema}. */
export type ErrorJson = z.infer<typeof ErrorJsonSchema>;

/** The body every HTTP API of the project answers a refusal or failure with: `{ error: { code, message, fix? } }`. */
export const ErrorEnvelopeSchema = z.object({ error: ErrorJsonSchema });
/** One error answer; see {@link ErrorEnvelopeSchema}. */
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

/** What an {@link AalisError} may carry beyond its code and message. */
export interface AalisErrorOptions {
  /** What the user can do about it, when the message does not already say. */
  readonly fix?: string | undefined;
  /** The error this one reports, kept for logs; never sent across a boundary. */
  readonly cause?: unknown;
}

/**
 * The base of every error class in the project: a stable `code` (each package narrows `C` to its
 * own closed set), the message, and an optional `fix`. The architecture guard refuses an error class
 * that does not extend it, so a caller can rely on these fields for anything thrown by the project.
 */
export class AalisError<C extends string = string> extends Error {
  override name: string;
  /** Which rule refused or what failed; stable across releases, for programs to branch on. */
  readonly code: C;
  /** What the user can do about it. */
  readonly fix?: string;

  constructor(code: C, message: string, options: AalisErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    if (options.fix !== undefined) this.fix = options.fix;
  }

  /** The code, message and fix: what the HTTP error envelope and the CLI's `--json` output carry. Never the stack or the cause. */
  toJSON(): ErrorJson {
    return { code: this.code, message: this.message, ...(this.fix === undefined ? {} : { fix: this.fix }) };
  }
}

/** Whether a value is an {@link AalisError} (of any package). */
export function isAalisError(error: unknown): error is AalisError {
  return error instanceof AalisError;
}

/**
 * The JSON form of anything thrown: an {@link AalisError}'s own `toJSON()`, else `fallbackCode` with
 * the error's message (one line, no stack).
 */
export function errorJsonOf(error: unknown, fallbackCode = 'internal'): ErrorJson {
  if (error instanceof AalisError) return error.toJSON();
  return { code: fallbackCode, message: describeError(error) };
}

/** The HTTP error body for anything thrown; both the daemon's API and the pod's routes answer with it. */
export function errorEnvelope(error: unknown, fallbackCode = 'internal'): ErrorEnvelope {
  return { error: errorJsonOf(error, fallbackCode) };
}

/** Reads an error answer back (the clients' side of {@link errorEnvelope}); `undefined` when the body is not one. */
export function readErrorEnvelope(body: unknown): ErrorJson | undefined {
  const parsed = ErrorEnvelopeSchema.safeParse(body);
  return parsed.success ? parsed.data.error : undefined;
}

/**
 * The text a command line prints for an error: the message, and the fix on its own line when the
 * message does not already end with it.
 */
export function errorText(error: unknown): string {
  const json = errorJsonOf(error);
  return json.fix === undefined || json.message.includes(json.fix) ? json.message : `${json.message}\nfix: ${json.fix}`;
}

/** A short, single-line description of anything thrown, for status reports and logs. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

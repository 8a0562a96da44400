import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { AalisError, errorEnvelope } from './aalis-error.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from './json-depth.js';

/**
 * The HTTP status of each error code the project's HTTP APIs (the daemon's and the pod's routes
 * it mounts) answer with. One table, so the same error gets the same status wherever it is
 * answered; a code not listed is a rule that refused the request ({@link REFUSED_STATUS}).
 */
export const HTTP_STATUS_BY_CODE: Readonly<Record<string, number>> = {
  // The request itself is malformed.
  'bad-request': 400,
  'bad-input': 400,
  'invalid-body': 400,
  invalid: 400,
  'no-message': 400,
  'not-plan': 400,
  'plan-name': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-owner': 403,
  'not-theirs': 403,
  'not-found': 404,
  'unknown-code': 404,
  'unknown-grant': 404,
  'unknown-conversation': 404,
  'method-not-allowed': 405,
  // The request is fine, the state it meets is not.
  conflict: 409,
  'already-answered': 409,
  'not-rememberable': 409,
  'turn-running': 409,
  'plan-locks-tier': 409,
  'root-mismatch': 409,
  'still-running': 409,
  'not-finished': 409,
  'export-clash': 409,
  'too-slow': 408,
  'too-large': 413,
  'unsupported-media-type': 415,
  'too-many-requests': 429,
  internal: 500,
  failed: 500,
  'not-saved': 500,
  stopping: 503,
  stopped: 503,
  unavailable: 503,
};

/** The status of an error code {@link HTTP_STATUS_BY_CODE} does not list: a rule of the project refused. */
export const REFUSED_STATUS = 403;

/** The HTTP status for anything thrown: by its code when it is an {@link AalisError}, else 500 (a failure, not a refusal). */
export function httpStatusOf(error: unknown): number {
  if (!(error instanceof AalisError)) return 500;
  return HTTP_STATUS_BY_CODE[error.code] ?? REFUSED_STATUS;
}

/** Sends a JSON body, never cached, never sniffed as another type. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Answers anything thrown with the status of {@link httpStatusOf} and core's envelope,
 * `{ error: { code, message, fix? } }`; never a stack trace. When the answer has begun
 * (a stream), the connection is cut instead; when the request's body has not all arrived, the
 * connection is closed after the answer.
 */
export function sendErrorAnswer(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // a request refused before its body was all in (too large, too slow, not read at all) leaves the
  // rest of it on the connection: the connection closes after the answer rather than wait for it
  if (res.req !== undefined && !res.req.complete) res.setHeader('connection', 'close');
  sendJson(res, httpStatusOf(error), errorEnvelope(error));
}

/** The codes of {@link RequestBodyError}. */
export const REQUEST_BODY_ERROR_CODES = ['unsupported-media-type', 'too-large', 'too-slow', 'invalid-body'] as const;
/** One of {@link REQUEST_BODY_ERROR_CODES}. */
export type RequestBodyErrorCode = (typeof REQUEST_BODY_ERROR_CODES)[number];

/** A request body {@link readJsonBody} refused: not JSON, too large, too slow to arrive, or not what the route takes. */
export class RequestBodyError extends AalisError<RequestBodyErrorCode> {
  override readonly name = 'RequestBodyError';
}

/** The largest JSON body {@link readJsonBody} reads. */
export const MAX_JSON_BODY = 1024 * 1024;

/** How {@link readJsonBody} reads a body. */
export interface ReadJsonBodyOptions {
  /** What an empty body reads as; without it an empty body is not JSON and refused. */
  readonly emptyBody?: unknown;
  /** The most bytes the body may have (default and at most {@link MAX_JSON_BODY}). */
  readonly maxBytes?: number;
  /**
   * How long the whole body may take to arrive once its headers are in (ms); none by default. A
   * route that needs no token sets one: with none, a connection that sent headers and never
   * finished its body was kept forever by anyone who could connect (found by an attack).
   */
  readonly deadlineMs?: number;
}

/** Decodes a body as UTF-8, refusing bytes that are not (TextDecoder's `fatal`). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON request body (at most {@link MAX_JSON_BODY} bytes) and validates it with `schema`.
 * Only `content-type: application/json` is read: a cross-site form cannot send it without a
 * preflight. A problem is a {@link RequestBodyError} naming it (`unsupported-media-type`, `too-large`,
 * `invalid-body` with the refused fields).
 */
export async function readJsonBody<S extends z.ZodType>(req: IncomingMessage, schema: S, options: ReadJsonBodyOptions = {}): Promise<z.output<S>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new RequestBodyError('unsupported-media-type', `send the body as JSON with 'content-type: application/json' (got '${type || 'none'}').`);
  }
  const max = Math.min(options.maxBytes ?? MAX_JSON_BODY, MAX_JSON_BODY);
  const tooLarge = () => new RequestBodyError('too-large', `the body is larger than ${max} bytes, the most this route reads; nothing was done.`, { fix: `send at most ${max} bytes` });
  // refused before a byte of it is read: nothing of a body declared too large is held
  if (Number(req.headers['content-length'] ?? 0) > max) throw tooLarge();
  const bytes = await bodyBytes(req, max, tooLarge, options.deadlineMs);
  let text: string;
  try {
    // JSON is UTF-8 (RFC 8259): bytes that are not would be replaced by U+FFFD, and a path
    // in the body would then name another file than the client's.
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw new RequestBodyError('invalid-body', 'the body is not UTF-8; JSON must be sent as UTF-8 (a file name that is not UTF-8 cannot be sent in JSON).');
  }
  let raw: unknown;
  if (text.trim() === '' && 'emptyBody' in options) {
    raw = options.emptyBody;
  } else {
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new RequestBodyError('invalid-body', `the body is not valid JSON (${(error as Error).message}).`);
    }
    if (jsonNestsDeeperThan(raw, MAX_JSON_DEPTH)) throw new RequestBodyError('invalid-body', `the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels; nothing was done.`);
  }
  return validBody(schema, raw);
}

/**
 * The body's bytes, at most `max`, within `deadlineMs` when given. A body refused part-way is left
 * unread (never buffered further); its connection is the answer's to close.
 */
function bodyBytes(req: IncomingMessage, max: number, tooLarge: () => RequestBodyError, deadlineMs: number | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => stop(new RequestBodyError('too-slow', `the body did not arrive within ${deadlineMs} ms, the most this route waits; nothing was done.`, { fix: 'send the whole request at once' })), deadlineMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return stop(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () => stop(undefined);
    const onClose = () => stop(new RequestBodyError('invalid-body', 'the connection closed before the whole body arrived; nothing was done.'));
    function stop(error: Error | undefined) {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', stop).off('close', onClose);
      if (error === undefined) return resolve(Buffer.concat(chunks));
      req.pause();
      reject(error);
    }
    req.on('data', onData).on('end', onEnd).on('error', stop).on('close', onClose);
  });
}

/** Validates a parsed body; a problem is an `invalid-body` {@link RequestBodyError} naming each refused field. */
export function validBody<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`);
    throw new RequestBodyError('invalid-body', `the body was refused: ${issues.join('; ')}.`);
  }
  return parsed.data;
}

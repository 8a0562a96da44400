import type { IncomingMessage, ServerResponse } from 'node:http';
import { AalisError, type AalisErrorOptions, errorEnvelope } from '@aalis/core';
import type { z } from 'zod';

/** Kinds of API error, each with its HTTP status. */
export const API_ERRORS = {
  'bad-request': 400,
  'invalid-body': 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  'method-not-allowed': 405,
  conflict: 409,
  'too-large': 413,
  'unsupported-media-type': 415,
  stopping: 503,
  internal: 500,
} as const;
/** One of the keys of {@link API_ERRORS}. */
export type ApiErrorKind = keyof typeof API_ERRORS;

/**
 * An error the API answers with core's envelope, `{ error: { code, message, fix? } }`, and the
 * status of its kind. `kind` is its `code`: one of {@link API_ERRORS}, or the code of the
 * package error it reports (an agent's `turn-running`).
 */
export class ApiError extends AalisError {
  override readonly name = 'ApiError';
  constructor(
    readonly kind: ApiErrorKind | string,
    message: string,
    readonly status: number = API_ERRORS[kind as ApiErrorKind] ?? 400,
    options?: AalisErrorOptions,
  ) {
    super(kind, message, options);
  }
}

const MAX_BODY = 1024 * 1024;

/** Sends a JSON body. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Sends an error as core's envelope, `{ error: { code, message, fix? } }`; never a stack trace. */
export function sendError(res: ServerResponse, error: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, errorEnvelope(error));
}

/** Reads a JSON body (at most 1 MiB) and validates it; a problem is an {@link ApiError} naming the field. */
export async function bodyOf<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) throw new ApiError('unsupported-media-type', `send the body as JSON with 'content-type: application/json' (got '${type || 'none'}').`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ApiError('too-large', `the body is larger than ${MAX_BODY} bytes.`);
    chunks.push(chunk as Buffer);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new ApiError('invalid-body', `the body is not valid JSON (${(error as Error).message}).`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`);
    throw new ApiError('invalid-body', `the body was refused: ${issues.join('; ')}.`);
  }
  return parsed.data;
}

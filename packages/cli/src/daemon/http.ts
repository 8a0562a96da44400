import type { IncomingMessage, ServerResponse } from 'node:http';
import { AalisError, type AalisErrorOptions, httpStatusOf, type ReadJsonBodyOptions, readJsonBody, sendErrorAnswer } from '@aalis/core';
import type { z } from 'zod';

export { sendJson } from '@aalis/core';

/** The API's own error kinds (a route may also answer with the code of the package error it reports). */
export const API_ERROR_KINDS = ['bad-request', 'unauthorized', 'forbidden', 'not-found', 'method-not-allowed', 'conflict', 'too-many-requests', 'stopping', 'unavailable', 'internal'] as const;
/** One of {@link API_ERROR_KINDS}. */
export type ApiErrorKind = (typeof API_ERROR_KINDS)[number];

/**
 * An error the API answers with core's envelope, `{ error: { code, message, fix? } }`, and the
 * status core's one table gives its code (`httpStatusOf`), as the pod's routes do. `kind` is its
 * `code`: one of {@link API_ERROR_KINDS}, or the code of the package error it reports (an agent's
 * `turn-running`).
 */
export class ApiError extends AalisError {
  override readonly name = 'ApiError';
  constructor(
    readonly kind: ApiErrorKind | (string & {}),
    message: string,
    options?: AalisErrorOptions,
  ) {
    super(kind, message, options);
  }

  /** The HTTP status of its code. */
  get status(): number {
    return httpStatusOf(this);
  }
}

/** Sends an error as core's envelope with its status; never a stack trace. */
export function sendError(res: ServerResponse, error: AalisError): void {
  sendErrorAnswer(res, error);
}

/**
 * Reads a JSON body (at most 1 MiB, or `options.maxBytes`, within `options.deadlineMs` when given)
 * and validates it; a problem is core's `RequestBodyError` naming the field.
 */
export function bodyOf<S extends z.ZodType>(req: IncomingMessage, schema: S, options: Pick<ReadJsonBodyOptions, 'maxBytes' | 'deadlineMs'> = {}): Promise<z.output<S>> {
  return readJsonBody(req, schema, options);
}

import { AalisError } from '@aalis/core';

/** The rules a pod refusal can name; the CLI and HTTP API report them as `code`. */
export const POD_ERROR_CODES = [
  'no-sandbox-root',
  'bad-sandbox-root',
  'root-in-workspace',
  'root-in-control-plane',
  'no-model',
  'no-sandbox',
  'bad-input',
  'not-found',
  'not-finished',
  'still-running',
  'return-kind-off',
  'export-disabled',
  'export-target',
  'export-source',
  'export-clash',
  'export-token',
  'remember-off',
  'undo-refused',
  'clean-failed',
  'not-owner',
] as const;
/** One of {@link POD_ERROR_CODES}. */
export type PodErrorCode = (typeof POD_ERROR_CODES)[number];

/** A refusal of the pod: `code` says which rule, the message what was refused and what to do. */
export class PodError extends AalisError<PodErrorCode> {
  override readonly name = 'PodError';
  constructor(code: PodErrorCode, message: string, fix?: string) {
    super(code, message, { fix });
  }
}

import { AalisError } from '@aalis/core';

/** Why a model request failed. */
export const MODEL_ERROR_REASONS = ['http', 'unreachable', 'timeout', 'aborted', 'bad-reply', 'not-configured'] as const;
/** One of {@link MODEL_ERROR_REASONS}. */
export type ModelErrorReason = (typeof MODEL_ERROR_REASONS)[number];

/** The model service failed or answered something unusable; the message says which and what to check. */
export class ModelError extends AalisError<ModelErrorReason> {
  override readonly name = 'ModelError';
  constructor(
    readonly reason: ModelErrorReason,
    message: string,
    /** What the user can do about it, when the message does not already say. */
    fix?: string,
    cause?: unknown,
  ) {
    super(reason, message, { fix, cause });
  }
}

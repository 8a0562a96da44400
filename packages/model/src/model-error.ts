/** Why a model request failed. */
export const MODEL_ERROR_REASONS = ['http', 'unreachable', 'timeout', 'aborted', 'bad-reply', 'not-configured'] as const;
/** One of {@link MODEL_ERROR_REASONS}. */
export type ModelErrorReason = (typeof MODEL_ERROR_REASONS)[number];

/** The model service failed or answered something unusable; the message says which and what to check. */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  /** Stable code, the package's convention for error classes. */
  readonly code: ModelErrorReason;
  constructor(
    readonly reason: ModelErrorReason,
    message: string,
    /** What the user can do about it, when the message does not already say. */
    readonly fix?: string,
  ) {
    super(message);
    this.code = reason;
  }
}

import { AalisError } from '@aalis/core';

/** The closed set of reasons the scaffolder stops; each has a fix. */
export const CREATE_ERROR_CODES = ['usage', 'target-not-empty', 'invalid-answer', 'invalid-config', 'write-failed'] as const;
/** A reason the scaffolder stopped. */
export type CreateErrorCode = (typeof CREATE_ERROR_CODES)[number];

/** Why nothing (or nothing more) was written, and what to do about it. */
export class CreateAalisError extends AalisError<CreateErrorCode> {
  override readonly name = 'CreateAalisError';
  constructor(code: CreateErrorCode, message: string, fix?: string) {
    super(code, message, { fix });
  }
}

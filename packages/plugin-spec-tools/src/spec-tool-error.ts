import { AalisError } from '@aalis/core';

/** The stable codes of {@link SpecToolError}. */
export const SPEC_TOOL_ERROR_CODES = ['bad-spec', 'reserved-name', 'exists', 'missing', 'unsafe-path', 'build-failed', 'no-engine', 'not-owner'] as const;
/** One of {@link SPEC_TOOL_ERROR_CODES}. */
export type SpecToolErrorCode = (typeof SPEC_TOOL_ERROR_CODES)[number];

/** Why a spec tool could not be loaded, written or built; `fix` says what the user can do. */
export class SpecToolError extends AalisError<SpecToolErrorCode> {
  override readonly name = 'SpecToolError';
  constructor(code: SpecToolErrorCode, message: string, fix?: string) {
    super(code, message, { fix });
  }
}

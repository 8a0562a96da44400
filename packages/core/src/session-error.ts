import { AalisError } from './aalis-error.js';

/** The ways the conversations refuse a request. */
export const SESSION_ERROR_CODES = ['root-mismatch'] as const;
/** One of {@link SESSION_ERROR_CODES}. */
export type SessionErrorCode = (typeof SESSION_ERROR_CODES)[number];

/** A request about a conversation that contradicts what the kernel holds of it; nothing was done. */
export class SessionError extends AalisError<SessionErrorCode> {
  override readonly name = 'SessionError';
}

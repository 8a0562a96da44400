import { AalisError } from './aalis-error.js';

/** The ways the kernel refuses a wiring or a lookup. */
export const KERNEL_ERROR_CODES = [
  'missing-provider',
  'duplicate-provider',
  'duplicate-plugin',
  'dependency-cycle',
  'not-provided',
  'not-injected',
  'not-declared',
  'invalid-config',
  'already-started',
] as const;
/** One of {@link KERNEL_ERROR_CODES}. */
export type KernelErrorCode = (typeof KERNEL_ERROR_CODES)[number];

/** An error from the kernel; `code` says which rule, the message says what to do. */
export class KernelError extends AalisError<KernelErrorCode> {
  override readonly name = 'KernelError';
}

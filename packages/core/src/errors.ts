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
export class KernelError extends Error {
  override readonly name = 'KernelError';
  constructor(
    readonly code: KernelErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A short, single-line description of anything thrown, for status reports and logs. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

import { AalisError } from './aalis-error.js';

/** The rules the safe file layer refuses by; `SafeFileError.code` is one of them. */
export const SAFE_FILE_ERROR_CODES = [
  /** The path is not absolute and normalised (no `.`, `..`, empty segment or NUL). */
  'bad-path',
  /** Longer than PATH_MAX (4096 bytes), or one name longer than NAME_MAX (255 bytes). */
  'path-too-long',
  /** A symlink sits at the final name, where the judged path expected none. */
  'final-symlink',
  /** A parent directory resolves somewhere other than the judged path (a symlinked or swapped parent). */
  'parent-elsewhere',
  /** What was opened is not at the judged path (a swap during the operation). */
  'opened-elsewhere',
  /** A parent directory that must exist does not. */
  'missing-parent',
  /** A parent is not a directory. */
  'not-a-directory',
  /** The final name is not a regular file (a directory, a FIFO, a device). */
  'not-a-file',
  /** The final name is missing where it must exist. */
  'missing',
  /** The final name exists where it must not. */
  'exists',
  /** A rename across file systems (EXDEV): the caller copies and removes instead, if it wants. */
  'cross-device',
  /** The operating system denied access (EACCES, EPERM): the daemon's user may not write there. */
  'permission',
  /** A mount point lies inside a tree to remove: what is mounted there is another place's, and stays. */
  'mount-point',
  /** The file is on one of the kernel's own file systems (procfs, sysfs, …), wherever it is mounted. */
  'kernel-file-system',
  /** Any other error of the operating system, named in the message. */
  'io',
] as const;
/** One of {@link SAFE_FILE_ERROR_CODES}. */
export type SafeFileErrorCode = (typeof SAFE_FILE_ERROR_CODES)[number];

const RULES: Readonly<Record<SafeFileErrorCode, string>> = {
  'bad-path': 'the path must be absolute and normalised',
  'path-too-long': 'the path is longer than the system allows',
  'final-symlink': 'a symlink at the final name',
  'parent-elsewhere': 'the parent resolves outside the judged path',
  'opened-elsewhere': 'the file opened is not at the judged path',
  'missing-parent': 'the parent directory does not exist',
  'not-a-directory': 'a parent is not a directory',
  'not-a-file': 'the final name is not a regular file',
  missing: 'the file does not exist',
  exists: 'the final name exists already',
  permission: 'the daemon may not write there',
  'mount-point': 'a mount point lies inside the tree',
  'kernel-file-system': "the kernel's own file system (the daemon's process, the host's kernel)",
  'cross-device': 'a rename cannot cross file systems',
  io: 'the operating system refused',
};

/**
 * A refusal of the safe file layer: `code` says which rule, `path` what was refused, `fix` what
 * the user can do. Nothing was written when it is thrown before the write (every rule but `io`
 * during a write, where the temp file is removed and the target left as it was).
 */
export class SafeFileError extends AalisError<SafeFileErrorCode> {
  override readonly name = 'SafeFileError';
  constructor(
    code: SafeFileErrorCode,
    readonly path: string,
    detail: string,
    fix?: string,
  ) {
    super(code, `${path}: refused (${RULES[code]}): ${detail}${fix ? ` ${fix}` : ''}`, { fix });
  }
}

/** Whether a value is a {@link SafeFileError}. */
export function isSafeFileError(error: unknown): error is SafeFileError {
  return error instanceof SafeFileError;
}

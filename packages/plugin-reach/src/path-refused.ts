import { AalisError, isWellFormedText, shownText } from '@aalis/core';

/** Why a path given to reach cannot be judged at all. */
export type PathRefusedCode = 'bad-path' | 'path-too-long' | 'git-config-unreadable';

/** Linux's PATH_MAX: the kernel refuses a longer path in any call. */
const PATH_MAX = 4096;

/**
 * A path that cannot name a file on this system, refused before it is judged: it holds a NUL
 * byte, it is not well-formed Unicode (a lone UTF-16 surrogate, which JSON can carry but which
 * has no UTF-8 form, so the name written would not be the name judged), or it is longer than the
 * system takes. Nothing was read, written or run.
 */
export class PathRefusedError extends AalisError<PathRefusedCode> {
  override readonly name = 'PathRefusedError';
}

/** Refuses a path no file can have; `what` names it in the message ("the path", "the cwd"). */
export function checkPathText(path: string, what = 'the path'): void {
  if (path.includes('\0')) {
    throw new PathRefusedError('bad-path', `${what} '${shownText(path)}' holds a NUL byte (U+0000), which no file name can hold; nothing was done.`, { fix: 'Remove the NUL byte from the path.' });
  }
  if (!isWellFormedText(path)) {
    throw new PathRefusedError('bad-path', `${what} '${shownText(path)}' is not well-formed Unicode (a lone surrogate): it has no UTF-8 form, so the file on disk would not be the one named; nothing was done.`, {
      fix: 'Send the name as well-formed Unicode. A name on disk that is not UTF-8 cannot be named through JSON: rename it with a command first (run_command mv, with a glob).',
    });
  }
}

/** Refuses an absolute path over PATH_MAX, and turns the system's own refusals of a path into {@link PathRefusedError}s; anything else is passed on. */
export function checkPathLength(absolute: string, what = 'the path'): void {
  const bytes = Buffer.byteLength(absolute);
  if (bytes >= PATH_MAX) throw tooLong(absolute, what, `it is ${bytes} bytes long, over PATH_MAX (${PATH_MAX})`);
}

/** The system's refusal of a path while it was being resolved, as a {@link PathRefusedError}, or `undefined` for other errors. */
export function pathRefusalOf(error: unknown, absolute: string, what = 'the path'): PathRefusedError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENAMETOOLONG') return tooLong(absolute, what, 'one of its names is longer than the system takes (NAME_MAX, 255 bytes), or the whole path is');
  if (code === 'ELOOP') return new PathRefusedError('bad-path', `${what} '${shownText(absolute)}' goes through a loop of symbolic links; nothing was done.`, { fix: 'Name the file by a path without the symlink loop.' });
  return undefined;
}

function tooLong(absolute: string, what: string, why: string): PathRefusedError {
  return new PathRefusedError('path-too-long', `${what} '${shownText(absolute)}' is too long: ${why}; nothing was done.`, { fix: 'Use a shorter path (a relative path from a deeper cwd does not help: the kernel sees the whole path).' });
}

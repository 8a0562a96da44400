/**
 * What a sandboxed command reads on its stdin: a string (as UTF-8) or bytes, given whole at the
 * start, or a live source fed while it runs (an `AsyncIterable` of bytes, usually a
 * {@link StdinStream}); the source's end is the command's EOF. Absent: the command's stdin is
 * empty (`/dev/null`).
 */
export type SandboxStdin = string | Uint8Array<ArrayBuffer> | AsyncIterable<Uint8Array>;

/** Whether `stdin` is fed while the command runs (so a run with it cannot be repeated). */
export function isLiveStdin(stdin: unknown): stdin is AsyncIterable<Uint8Array> {
  return typeof stdin === 'object' && stdin !== null && !(stdin instanceof Uint8Array) && typeof (stdin as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function';
}

/** What {@link BoundedOutput.attach} listens to: a child's stdout or stderr. */
export interface OutputSource {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
}

/**
 * One stream of a sandboxed command's output, kept to its first `limit` bytes (a run request's
 * `maxOutputBytes`). The rest is read and dropped, so the command never blocks on a full pipe,
 * and `truncated` says whether any byte was dropped. Every backend and the host runner use this one.
 */
export class BoundedOutput {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #truncated = false;

  constructor(readonly limit: number) {}

  /** Whether a byte of the stream was dropped; an empty chunk drops nothing. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /** How many bytes are kept (at most `limit`). */
  get size(): number {
    return this.#kept;
  }

  /** Keeps every `data` chunk of `source`; nothing when there is no stream. */
  attach(source: OutputSource | null | undefined): void {
    source?.on('data', (chunk: Buffer) => this.push(chunk));
  }

  /** Keeps what fits of `chunk` under the limit and notes whether the rest was dropped. */
  push(chunk: Buffer): void {
    const room = Math.max(0, this.limit - this.#kept);
    if (chunk.length > room) this.#truncated = true;
    if (room === 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.#chunks.push(part);
    this.#kept += part.length;
  }

  /** The kept bytes as UTF-8 (a character cut at the limit reads as U+FFFD). */
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

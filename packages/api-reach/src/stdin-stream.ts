/** The bytes a {@link StdinStream} holds by default that the command has not taken yet: 1 MiB. */
export const DEFAULT_MAX_PENDING_STDIN = 1024 * 1024;

/** What a {@link StdinStream.write} or {@link StdinStream.end} did: queued, or refused and why. */
export type StdinWrite =
  | { readonly ok: true; /** Bytes queued now that the command has not taken yet. */ readonly pending: number }
  | {
      readonly ok: false;
      /**
       * `ended`: the writer already ended the input; `closed`: the command's side is gone (it
       * ended, was killed, or never started); `full`: the command is not reading and the
       * queue would pass its bound.
       */
      readonly reason: 'ended' | 'closed' | 'full';
      readonly message: string;
    };

const encoder = new TextEncoder();

/**
 * A command's stdin fed while it runs: `write` queues bytes (a string as UTF-8), `end` closes the
 * command's stdin (EOF). A backend takes it as the request's `stdin` and pulls from it only as
 * fast as the command's pipe accepts, so what a command does not read stays here, and here it is
 * bounded: a write that would hold more than `maxPendingBytes` is refused (`full`), never kept.
 * One run consumes it; once that run ends (or stops reading its input), writes are refused
 * (`closed`) and what was queued is dropped.
 */
export class StdinStream implements AsyncIterable<Uint8Array> {
  readonly maxPendingBytes: number;
  #queue: Uint8Array[] = [];
  #pending = 0;
  #ended = false;
  #closed = false;
  #taken = false;
  #waiting: ((result: IteratorResult<Uint8Array>) => void) | undefined;
  #onClose: (() => void)[] = [];

  constructor(options: { readonly maxPendingBytes?: number } = {}) {
    this.maxPendingBytes = options.maxPendingBytes ?? DEFAULT_MAX_PENDING_STDIN;
  }

  /** `open` while writes are taken, `ended` after {@link end}, `closed` once the command's side is gone. */
  get state(): 'open' | 'ended' | 'closed' {
    return this.#closed ? 'closed' : this.#ended ? 'ended' : 'open';
  }

  /** Bytes written that the command has not taken yet. */
  get pending(): number {
    return this.#pending;
  }

  /** Queues `chunk` for the command (a string as UTF-8, bytes as they are). */
  write(chunk: string | Uint8Array): StdinWrite {
    const refused = this.#refusal();
    if (refused) return refused;
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk.slice();
    if (this.#pending + bytes.length > this.maxPendingBytes) {
      return {
        ok: false,
        reason: 'full',
        message: `the command has not read ${this.#pending} bytes of its input yet, and ${bytes.length} more would pass the bound of ${this.maxPendingBytes} bytes kept for it; nothing of this write was queued. Wait until it reads (or check that it reads its stdin at all).`,
      };
    }
    if (bytes.length === 0) return { ok: true, pending: this.#pending };
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting({ done: false, value: bytes });
    } else {
      this.#queue.push(bytes);
      this.#pending += bytes.length;
    }
    return { ok: true, pending: this.#pending };
  }

  /** Ends the input: once the command has read what is queued, its stdin is at EOF. */
  end(): StdinWrite {
    const refused = this.#refusal();
    if (refused) return refused;
    this.#ended = true;
    if (this.#queue.length === 0) this.#finish();
    return { ok: true, pending: this.#pending };
  }

  /** Calls `listener` once when the command's side is gone (the stream is `closed`). */
  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#onClose.push(listener);
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    if (this.#taken) throw new TypeError('a StdinStream feeds one run only, and it was already given to one');
    this.#taken = true;
    return {
      next: () => {
        if (this.#closed) return Promise.resolve({ done: true, value: undefined });
        const bytes = this.#queue.shift();
        if (bytes) {
          this.#pending -= bytes.length;
          return Promise.resolve({ done: false, value: bytes });
        }
        if (this.#ended) {
          this.#finish();
          return Promise.resolve({ done: true, value: undefined });
        }
        return new Promise((resolve) => {
          this.#waiting = resolve;
        });
      },
      // the consumer stops: the command's side is gone
      return: () => {
        this.#close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  #refusal(): StdinWrite | undefined {
    if (this.#closed) return { ok: false, reason: 'closed', message: "the command's stdin is closed: the command has ended (or was stopped), so nothing more can be written to it." };
    if (this.#ended) return { ok: false, reason: 'ended', message: "the command's input was already ended (EOF was sent), so nothing more can be written to it." };
    return undefined;
  }

  /** The writer ended and everything queued was taken: a waiting reader gets the end. */
  #finish(): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.({ done: true, value: undefined });
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#pending = 0;
    this.#finish();
    for (const listener of this.#onClose.splice(0)) listener();
  }
}

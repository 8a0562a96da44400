import { isLiveStdin, type SandboxStdin } from './sandbox-stdin.js';

/** The writable end of a command's stdin as a backend holds it (a Node `Writable` is one). */
export interface StdinSink {
  write(chunk: Uint8Array): boolean;
  end(chunk?: Uint8Array): unknown;
  once(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  removeListener(event: 'drain' | 'close' | 'error', listener: () => void): unknown;
  readonly destroyed?: boolean;
}

/** A feed in progress: {@link stop} ends it when the run is over, whatever the source still holds. */
export interface StdinFeed {
  /** Settles once the source is spent or the sink gone. */
  readonly done: Promise<void>;
  /** The run ended: stop pulling from the source (a {@link StdinStream} is then `closed`). */
  stop(): void;
}

const encoder = new TextEncoder();

/**
 * Feeds a request's stdin to the command's stdin `sink`: a string or bytes at once and then EOF;
 * a live source ({@link isLiveStdin}) chunk by chunk, pulling the next one only once the sink has
 * taken the last (its `drain`), so a command that does not read leaves the bytes in the source,
 * where they are bounded. The sink closing or failing (the command ended: EPIPE) stops the feed;
 * the source's end ends the sink (EOF). The one feed every backend uses.
 */
export function feedStdin(source: SandboxStdin, sink: StdinSink): StdinFeed {
  if (!isLiveStdin(source)) {
    sink.end(typeof source === 'string' ? encoder.encode(source) : source);
    return { done: Promise.resolve(), stop: () => {} };
  }
  const iterator = source[Symbol.asyncIterator]();
  let gone = false;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    wake = () => {
      gone = true;
      resolve();
    };
  });
  sink.once('close', wake);
  sink.once('error', wake);
  const done = (async () => {
    try {
      while (!gone && !sink.destroyed) {
        const next = await Promise.race([iterator.next(), stopped.then(() => undefined)]);
        if (next === undefined || gone) break;
        if (next.done) {
          sink.end();
          return;
        }
        if (!sink.write(next.value)) {
          let drained: () => void = () => {};
          const drain = new Promise<void>((resolve) => {
            drained = resolve;
          });
          sink.once('drain', drained);
          await Promise.race([drain, stopped]);
          sink.removeListener('drain', drained);
        }
      }
    } catch {
      // a source that failed: the command gets EOF, as from a source that ended
      if (!gone) sink.end();
    } finally {
      sink.removeListener('close', wake);
      sink.removeListener('error', wake);
    }
    await iterator.return?.();
  })();
  return {
    done,
    stop: () => {
      wake();
      void iterator.return?.();
    },
  };
}

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ToolOutcome } from '@aalis/core';

/**
 * The tool calls in flight, each with its abort signal: a caller that hangs up aborts its own
 * call, and the daemon's stop aborts them all (the sandbox backends kill the command's tree).
 */
export class CallTracker {
  readonly #running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();

  /** Runs one call; aborted when the response closes before it is answered. */
  async run(res: ServerResponse, call: (signal: AbortSignal, callId: string) => Promise<ToolOutcome>, callId: string = randomUUID()): Promise<ToolOutcome> {
    const controller = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) controller.abort(new Error('the caller hung up'));
    };
    res.on('close', onClose);
    const id = this.#running.has(callId) ? `${callId}-${randomUUID()}` : callId;
    const done = call(controller.signal, id);
    this.#running.set(id, { controller, done: done.catch(() => {}) });
    try {
      return await done;
    } finally {
      this.#running.delete(id);
      res.off('close', onClose);
    }
  }

  /** How many calls are running. */
  get size(): number {
    return this.#running.size;
  }

  /** Aborts every running call. */
  abortAll(reason: string): void {
    for (const { controller } of this.#running.values()) controller.abort(new Error(reason));
  }

  /** Resolves when every running call has ended, or after `ms`, whichever is first. */
  async settled(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const all = Promise.all([...this.#running.values()].map((r) => r.done)).then(() => true);
    try {
      return await Promise.race([all, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ToolOutcome } from '@aalis/core';

/**
 * The tool calls in flight, each with its abort signal: a caller that hangs up aborts its own
 * call, and the daemon's stop aborts them all (the sandbox backends kill the command's tree).
 */
/** A running call as the console shows it next to the asks of its conversation. */
export interface RunningCall {
  readonly callId: string;
  /** The (root) session. */
  readonly session: string;
  readonly tool: string;
  /** The command or parameters, cut to a line. */
  readonly summary: string;
  readonly startedAt: number;
}

function summaryOf(tool: string, params: unknown): string {
  const command = (params as { command?: unknown } | null)?.command;
  const text = typeof command === 'string' ? command : Array.isArray(command) ? command.join(' ') : JSON.stringify(params) ?? '';
  return `${tool} ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`;
}

export class CallTracker {
  readonly #running = new Map<string, { controller: AbortController; done: Promise<unknown>; view: RunningCall }>();

  /** The calls running in a (root) session. */
  runningIn(session: string): RunningCall[] {
    return [...this.#running.values()].map((r) => r.view).filter((v) => v.session === session);
  }

  /** Runs one call; aborted when the response closes before it is answered. */
  async run(
    res: ServerResponse,
    what: { session: string; tool: string; params: unknown },
    call: (signal: AbortSignal, callId: string) => Promise<ToolOutcome>,
    callId: string = randomUUID(),
  ): Promise<ToolOutcome> {
    const controller = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) controller.abort(new Error('the caller hung up'));
    };
    res.on('close', onClose);
    const id = this.#running.has(callId) ? `${callId}-${randomUUID()}` : callId;
    const done = call(controller.signal, id);
    const view: RunningCall = { callId: id, session: what.session, tool: what.tool, summary: summaryOf(what.tool, what.params), startedAt: Date.now() };
    this.#running.set(id, { controller, done: done.catch(() => {}), view });
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

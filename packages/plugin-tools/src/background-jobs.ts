import { randomUUID } from 'node:crypto';
import { type AccessTier, execPlaceOf, type SessionSettings, type ToolCallContext, ToolError } from '@aalis/core';

type Outcome<T> = { ok: true; value: T } | { ok: false; kind: string; message: string };

/** A background command as `command_status` shows it. */
export type JobView<T> =
  | { readonly state: 'running' }
  | { readonly state: 'done'; readonly outcome: Outcome<T>; /** Why it was closed before it ended by itself. */ readonly closed?: string };

interface Job<T> {
  readonly session: string;
  readonly controller: AbortController;
  view: JobView<T>;
  closed?: string;
}

/**
 * The background commands (terminals) of the shell tools. Each runs under the policy it started
 * with; it is closed (killed through its abort signal, its output kept, the reason in its status)
 * when the policy it started under no longer holds: its conversation's tier moves between the
 * sandboxed tiers and the host tiers (`execPlaceOf`).
 */
export class BackgroundJobs<T> {
  readonly #jobs = new Map<string, Job<T>>();

  /** Starts `run` with a signal that the call's own and a closure both abort; answers its id at once. */
  start(ctx: ToolCallContext, run: (ctx: ToolCallContext) => Promise<T>): { jobId: string } {
    const id = randomUUID();
    const controller = new AbortController();
    const job: Job<T> = { session: ctx.turn.session.rootId ?? ctx.turn.session.id, controller, view: { state: 'running' } };
    this.#jobs.set(id, job);
    const signal = AbortSignal.any([ctx.signal, controller.signal]);
    const finish = (outcome: Outcome<T>) => {
      job.view = { state: 'done', outcome, ...(job.closed !== undefined ? { closed: job.closed } : {}) };
    };
    run({ ...ctx, signal }).then(
      (value) => finish({ ok: true, value }),
      (error: unknown) => finish(error instanceof ToolError ? { ok: false, kind: error.kind, message: error.message } : { ok: false, kind: 'failed', message: String(error) }),
    );
    return { jobId: id };
  }

  /** A job's state, and its result and closure reason when done. */
  status(id: string): JobView<T> {
    const job = this.#jobs.get(id);
    if (!job) throw new ToolError('failed', `there is no background command '${id}'.`);
    return job.view;
  }

  /** Closes the running jobs of a (root) conversation whose settings changed, when the change moves it between the sandbox and the host. */
  onSettingsChanged(event: { sessionId: string; previous: SessionSettings; next: SessionSettings }): number {
    const from = execPlaceOf(event.previous.tier);
    const to = execPlaceOf(event.next.tier);
    if (from === to) return 0;
    return this.close(event.sessionId, tierMove(event.previous.tier, event.next.tier));
  }

  /** Closes every running job of a (root) conversation, saying why. */
  close(session: string, reason: string): number {
    let closed = 0;
    for (const job of this.#jobs.values()) {
      if (job.session !== session || job.view.state !== 'running') continue;
      job.closed = reason;
      job.controller.abort(new Error(reason));
      closed++;
    }
    return closed;
  }

  /** Closes every running job (the plugin's disposal). */
  closeAll(reason: string): void {
    for (const job of this.#jobs.values()) if (job.view.state === 'running') {
      job.closed = reason;
      job.controller.abort(new Error(reason));
    }
  }
}

function tierMove(from: AccessTier, to: AccessTier): string {
  return `closed: the conversation's tier moved from '${from}' (${execPlaceOf(from)}) to '${to}' (${execPlaceOf(to)}), and a background command keeps the policy it started with, so it was stopped; its output so far is kept. Start it again to run it under the new tier.`;
}

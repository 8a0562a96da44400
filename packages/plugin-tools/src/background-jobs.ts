import { randomUUID } from 'node:crypto';
import { type AccessTier, execPlaceOf, type SessionSettings, settingsScopeOf, type ToolCallContext, ToolError } from '@aalis/core';
import type { MainDirectoryChangedEvent } from '@aalis/plugin-reach';

type Outcome<T> = { ok: true; value: T } | { ok: false; kind: string; message: string };

/** A background command as `command_status` shows it. */
export type JobView<T> =
  | { readonly state: 'running' }
  | { readonly state: 'done'; readonly outcome: Outcome<T>; /** Why it was closed before it ended by itself. */ readonly closed?: string };

interface Job<T> {
  readonly session: string;
  /** Whose binding in the conversation it ran under (`settingsScopeOf`). */
  readonly person: string;
  readonly controller: AbortController;
  view: JobView<T>;
  closed?: string;
}

/**
 * The background commands (terminals) of the shell tools. Each runs under the policy it started
 * with; it is closed (killed through its abort signal, its output kept, the reason in its status)
 * when the policy it started under no longer holds: its conversation's tier moves between the
 * sandboxed tiers and the host tiers (`execPlaceOf`), or its conversation's main directory moves
 * (`reach/main-directory-changed`).
 */
export class BackgroundJobs<T> {
  readonly #jobs = new Map<string, Job<T>>();

  /** Starts `run` with a signal that the call's own and a closure both abort; answers its id at once. */
  start(ctx: ToolCallContext, run: (ctx: ToolCallContext) => Promise<T>): { jobId: string } {
    const id = randomUUID();
    const controller = new AbortController();
    const job: Job<T> = { session: ctx.turn.session.rootId ?? ctx.turn.session.id, person: settingsScopeOf(ctx.turn), controller, view: { state: 'running' } };
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

  /**
   * Closes the running jobs of a conversation whose main directory moved: one person's when only
   * theirs moved, else every job of the conversation (a person with a binding of their own did not
   * move, but closing it too errs on the side of the new place).
   */
  onMainDirectoryChanged(event: MainDirectoryChangedEvent): number {
    const reason = `closed: the conversation's main directory moved from '${event.previous}' to '${event.next}', and a background command keeps the place and policy it started with, so it was stopped; its output so far is kept. Start it again to run it in the new directory.`;
    return this.close(event.sessionId, reason, event.person);
  }

  /** Closes every running job of a (root) conversation, or only one person's in it, saying why. */
  close(session: string, reason: string, person?: string): number {
    let closed = 0;
    for (const job of this.#jobs.values()) {
      if (job.session !== session || job.view.state !== 'running') continue;
      if (person !== undefined && job.person !== person) continue;
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

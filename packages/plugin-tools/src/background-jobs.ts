import { randomUUID } from 'node:crypto';
import type { StdinStream } from '@aalis/api-reach';
import { type AccessTier, execPlaceOf, type SessionSettings, settingsScopeOf, type ToolCallContext, ToolError } from '@aalis/core';
import type { MainDirectoryChangedEvent } from '@aalis/plugin-reach';
import { credentialOf } from './credential.js';

type Outcome<T> = { ok: true; value: T } | { ok: false; kind: string; message: string };

/** A background command as `command_status` shows it. */
export type JobView<T> =
  | { readonly state: 'running' }
  | { readonly state: 'done'; readonly outcome: Outcome<T>; /** Why it was closed before it ended by itself. */ readonly closed?: string };

/** A background command's live stdin (`interactive: true`): where `command_input` writes, and how each write is judged first. */
export interface JobInput {
  readonly stream: StdinStream;
  /** Judges one write as the command started with that input would be (an ask where that asks); throws a {@link ToolError} when refused. */
  judge(ctx: ToolCallContext, text: string): Promise<void>;
}

/** What `command_input` answers: bytes written, bytes the command has not read yet, whether its input is ended. */
export interface InputView {
  readonly written: number;
  readonly pending: number;
  readonly eof: boolean;
}

interface Job<T> {
  readonly session: string;
  /** Whose binding in the conversation it ran under (`settingsScopeOf`). */
  readonly person: string;
  readonly controller: AbortController;
  view: JobView<T>;
  closed?: string;
  /** Settles when the job's run has ended and its view is final. */
  readonly ended: Promise<void>;
  readonly input?: JobInput;
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

  /** Starts `run` with a signal that the call's own and a closure both abort; answers its id at once. `input`: its live stdin, written by {@link input}. */
  start(ctx: ToolCallContext, run: (ctx: ToolCallContext) => Promise<T>, input?: JobInput): { jobId: string } {
    const id = randomUUID();
    const controller = new AbortController();
    const signal = AbortSignal.any([ctx.signal, controller.signal]);
    const finish = (outcome: Outcome<T>) => {
      job.view = { state: 'done', outcome, ...(job.closed !== undefined ? { closed: job.closed } : {}) };
    };
    const ended = run({ ...ctx, signal }).then(
      (value) => finish({ ok: true, value }),
      (error: unknown) => finish(error instanceof ToolError ? { ok: false, kind: error.kind, message: error.message } : { ok: false, kind: 'failed', message: String(error) }),
    );
    const job: Job<T> = { session: rootOf(ctx), person: settingsScopeOf(ctx.turn), controller, view: { state: 'running' }, ended, ...(input ? { input } : {}) };
    this.#jobs.set(id, job);
    return { jobId: id };
  }

  /** A job's state, and its result and closure reason when done; only the person who started it, in its conversation, sees it. */
  status(ctx: ToolCallContext, id: string): JobView<T> {
    return this.#own(ctx, id).view;
  }

  /**
   * Stops a running job of the caller's (its output kept, `closed` saying it was stopped on
   * request) and answers its final view once it has ended; a job already done is answered as it is.
   */
  async kill(ctx: ToolCallContext, id: string): Promise<JobView<T>> {
    const job = this.#own(ctx, id);
    if (job.view.state === 'running') {
      job.closed = 'closed: stopped on request (command_kill); its output so far is kept.';
      job.controller.abort(new Error(job.closed));
    }
    await job.ended;
    return job.view;
  }

  /**
   * Writes `text` (UTF-8) to a running job's stdin, and with `eof` ends it; only the person who
   * started it, in its conversation. Each write is judged first as the command started with that
   * input would be (a script fed to a shell is the command as much as its argv). A job that has
   * ended, one started without `interactive: true`, a write over the bound of input the command
   * has not read: a {@link ToolError} saying so, nothing written.
   */
  async input(ctx: ToolCallContext, id: string, write: { readonly text?: string; readonly eof?: boolean }): Promise<InputView> {
    const job = this.#own(ctx, id);
    // closed (a tier or directory move, command_kill) is over for its input at once: the kill and
    // the tear-down that end it take a while, and a write meanwhile would still reach the command
    const over = () => job.view.state === 'done' || job.closed !== undefined;
    const ended = () =>
      new ToolError('failed', `background command '${id}' ${job.view.state === 'done' ? 'has ended' : 'is being stopped'}${job.closed !== undefined ? ` (${job.closed})` : ''}, so nothing can be written to it; command_status shows its result.`);
    if (over()) throw ended();
    if (!job.input) {
      throw new ToolError('failed', `background command '${id}' was started without interactive: true, so its stdin is empty (/dev/null) and cannot be written to; start it again with run_command_background and interactive: true to write to it.`);
    }
    const { stream } = job.input;
    let written = 0;
    if (write.text !== undefined && write.text !== '') {
      await job.input.judge(ctx, write.text);
      if (over()) throw ended(); // it ended, or was closed, while the write was asked for
      const bytes = new TextEncoder().encode(write.text);
      const done = stream.write(bytes);
      if (!done.ok) throw done.reason === 'closed' ? ended() : new ToolError('failed', `nothing was written to background command '${id}': ${done.message}`);
      written = bytes.length;
    }
    if (write.eof) {
      const done = stream.end();
      if (!done.ok && done.reason === 'closed') throw ended();
    }
    return { written, pending: stream.pending, eof: stream.state !== 'open' };
  }

  /** The job `id` if the caller started it in this conversation; anybody else's is not shown to exist. */
  #own(ctx: ToolCallContext, id: string): Job<T> {
    // A call that acts for someone else (a stranger, or the owner's turn with another person in
    // it) has no local effect: the owner's command's output, its stdin and its life are local
    // effects as much as a write. Refused before the lookup, so it does not learn the job exists.
    if (credentialOf(ctx).exec === 'none') {
      throw new ToolError(
        'denied',
        `${ctx.tool} was refused (rule: no-local-effect): this call acts for someone who is not the owner, so it may not read, write to or stop a background command on this machine. This cannot be requested; the owner can do it in a turn of their own.`,
      );
    }
    const job = this.#jobs.get(id);
    if (!job || job.session !== rootOf(ctx) || job.person !== settingsScopeOf(ctx.turn)) {
      throw new ToolError('failed', `there is no background command '${id}' of yours in this conversation. Background commands end when the daemon stops (a restart is also the only way the sandbox backend changes) and are not kept across one; start it again if you still need it.`);
    }
    return job;
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

function rootOf(ctx: ToolCallContext): string {
  return ctx.turn.session.rootId ?? ctx.turn.session.id;
}

function tierMove(from: AccessTier, to: AccessTier): string {
  return `closed: the conversation's tier moved from '${from}' (${execPlaceOf(from)}) to '${to}' (${execPlaceOf(to)}), and a background command keeps the policy it started with, so it was stopped; its output so far is kept. Start it again to run it under the new tier.`;
}

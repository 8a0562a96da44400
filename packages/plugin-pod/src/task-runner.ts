import type { SandboxService } from '@aalis/api-reach';
import type { Sessions, TempRecorder } from '@aalis/core';
import { ModelError, type ModelProvider } from '@aalis/model';
import type { ReachInstance } from '@aalis/plugin-reach';
import { runAgent } from './agent.js';
import type { PodConfig } from './config.js';
import { finishedTurns } from './conversation-context.js';
import { PodError } from './errors.js';
import { podEnvOf, podPolicyOf } from './policy.js';
import { shorten } from './return-message.js';
import { FINAL_STATES, type TaskRecord, type TaskState } from './task.js';
import { checkSameTaskDir } from './task-dir-fd.js';
import type { TaskLog } from './task-log.js';

/** What the runner needs: the pod's settings and services, and its task list. */
export interface TaskRunnerDeps {
  readonly config: PodConfig;
  /** The reach contract's protected lists, which every task's policy keeps. */
  readonly lists: ReachInstance['lists'];
  readonly sessions: Sessions;
  /** The kernel's `sandbox` service, looked up when a task runs. */
  readonly sandbox: () => SandboxService | undefined;
  readonly model: ModelProvider | undefined;
  readonly journal?: TempRecorder;
  readonly task: (id: string) => TaskRecord;
  readonly logOf: (task: TaskRecord) => TaskLog;
  /** Persists the task list (states, steps, errors). */
  readonly save: () => Promise<void>;
}

/**
 * Runs queued tasks, at most `maxConcurrent` at once, each under its timeout and its own abort
 * signal, and records how each ended. Every way out (done, failed, timed out, cancelled, the pod
 * stopping, a crash) ends in {@link TaskRunner.finish}, so no task is left `running`.
 */
export class TaskRunner {
  readonly #running = new Map<string, AbortController>();
  readonly #waiters = new Map<string, (() => void)[]>();
  readonly #queue: string[] = [];
  #stopped = false;

  constructor(private readonly deps: TaskRunnerDeps) {}

  /** Queues a task; it starts as soon as a slot is free. */
  enqueue(id: string): void {
    this.#queue.push(id);
    this.#pump();
  }

  /** Resolves when the task has ended. */
  async ended(task: TaskRecord): Promise<void> {
    if (FINAL_STATES.has(task.state)) return;
    await new Promise<void>((resolve) => this.#waiters.set(task.id, [...(this.#waiters.get(task.id) ?? []), resolve]));
  }

  /** Stops a queued task before it starts, or aborts a running one; resolves when it has ended. */
  async cancel(task: TaskRecord): Promise<void> {
    if (task.state === 'queued') {
      this.#queue.splice(this.#queue.indexOf(task.id), 1);
      await this.finish(task, 'cancelled', 'cancelled by the user before it started');
    } else {
      this.#running.get(task.id)?.abort('cancelled');
    }
    await this.ended(task);
  }

  /** Starts nothing more, ends queued tasks as cancelled, aborts running ones and waits for them. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const id of this.#queue.splice(0)) await this.finish(this.deps.task(id), 'cancelled', 'the pod stopped before the task started');
    const running = [...this.#running.keys()].map((id) => this.deps.task(id));
    for (const controller of this.#running.values()) controller.abort('stopped');
    await Promise.all(running.map((task) => this.ended(task)));
  }

  /** Records how a task ended, in its record and its log, and wakes whoever waits for it. */
  async finish(task: TaskRecord, state: TaskState, message: string, options: { readonly log?: boolean } = {}): Promise<void> {
    task.state = state;
    task.finishedAt = Date.now();
    task.progress = state;
    if (state !== 'succeeded') task.error = shorten(message, 2_000);
    try {
      // `log: false`: the task's directory is not the pod's any more, and nothing is written there
      if (options.log !== false) await this.deps.logOf(task).append({ kind: 'finished', state, message: shorten(message, 2_000) });
    } catch {
      // The log lives in the task's directory; a failing disk must not leave the task running.
    }
    await this.deps.save().catch(() => {});
    for (const resolve of this.#waiters.get(task.id) ?? []) resolve();
    this.#waiters.delete(task.id);
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.deps.config.maxConcurrent && this.#queue.length > 0) {
      const id = this.#queue.shift()!;
      const controller = new AbortController();
      this.#running.set(id, controller);
      void this.#run(this.deps.task(id), controller).finally(() => {
        this.#running.delete(id);
        this.#pump();
      });
    }
  }

  async #run(task: TaskRecord, controller: AbortController): Promise<void> {
    const c = this.deps.config;
    const timer = setTimeout(() => controller.abort('timeout'), c.timeoutMs);
    const log = this.deps.logOf(task);
    try {
      // the directory was made and judged when the task was queued; if it was replaced since, the
      // log and the code's files would land in someone else's directory
      try {
        checkSameTaskDir(task.dirs);
      } catch (error) {
        await this.finish(task, 'failed', (error as Error).message, { log: false });
        return;
      }
      task.state = 'running';
      task.startedAt = Date.now();
      task.progress = 'starting';
      await this.deps.save();
      await log.append({ kind: 'started', task: task.task, dir: task.dirs.work, tools: [...c.tools] });
      let context: string | undefined;
      if (c.readContext) {
        // A read-only snapshot: Sessions.peek hands out a frozen copy and never creates a conversation.
        const read = finishedTurns((await this.deps.sessions.peek(task.session)) ?? { context: { messages: [], notes: [] } }, c.contextMaxChars);
        context = read.text;
        await log.append({ kind: 'context', enabled: true, messages: read.messages, chars: read.text.length });
      } else {
        await log.append({ kind: 'context', enabled: false, messages: 0, chars: 0 });
      }
      const sandbox = this.deps.sandbox();
      if (!sandbox) throw new PodError('no-sandbox', "the kernel's sandbox service went away; nothing more of this task runs.");
      if (this.deps.model === undefined) throw new PodError('no-model', 'no model is configured for the pod; nothing of this task runs.');
      const result = await runAgent({
        task: task.task,
        dirs: task.dirs,
        context,
        tools: c.tools,
        model: this.deps.model,
        maxSteps: c.model.maxSteps,
        sandbox,
        policy: podPolicyOf(task.dirs, this.deps.lists, { allowWrites: c.allowWrites, network: c.network, localPorts: c.localPorts }),
        env: podEnvOf(task.dirs, c.path),
        commandTimeoutMs: c.commandTimeoutMs,
        signal: controller.signal,
        ...(this.deps.journal ? { journal: this.deps.journal } : {}),
        log: async (entry) => {
          await log.append(entry);
        },
        step: (steps, progress) => {
          task.steps = steps;
          task.progress = progress;
        },
      });
      if (controller.signal.aborted) throw new ModelError('aborted', 'stopped');
      if (result.conclusion !== undefined) task.conclusion = result.conclusion;
      if (result.summary !== undefined) task.summary = result.summary;
      await this.finish(task, result.state, result.error ?? (result.state === 'succeeded' ? 'done' : 'failed'));
    } catch (error) {
      const reason = controller.signal.aborted ? String(controller.signal.reason) : undefined;
      if (reason === 'timeout') await this.finish(task, 'timed-out', `the task ran longer than ${c.timeoutMs} ms (timeoutMs) and was stopped`);
      else if (reason !== undefined) await this.finish(task, 'cancelled', reason === 'stopped' ? 'the pod stopped' : 'cancelled by the user');
      else if (error instanceof ModelError) await this.finish(task, 'failed', error.message);
      else await this.finish(task, 'crashed', `the task crashed: ${(error as Error)?.message ?? String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

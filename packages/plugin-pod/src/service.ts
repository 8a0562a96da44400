import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { SandboxService } from '@aalis/api-reach';
import { type DurableStore, defineService, type Sessions, type TempRecorder } from '@aalis/core';
import type { ReachBindings } from '@aalis/plugin-reach';
import { realPathOf } from '@aalis/plugin-reach';
import { z } from 'zod';
import { runAgent } from './agent.js';
import { type PodConfig, type ReturnKind, SubdirSchema } from './config.js';
import { finishedTurns } from './conversation-context.js';
import { PodError } from './errors.js';
import type { ClashChoice, ExportGrant, ExportRecord, ExportRequest, ExportStart, UndoRecord } from './export-types.js';
import { Exporter } from './exporter.js';
import type { ReachHost } from '@aalis/plugin-reach';
import { ModelError, type ModelProvider } from '@aalis/model';
import { checkRoot, makeTaskDirs, type RootContext, within } from './places.js';
import { podEnvOf, podPolicyOf } from './policy.js';
import { returnMessage, shorten, statusOf, summaryOf } from './return-message.js';
import { FINAL_STATES, type LogEntry, type TaskFile, type TaskRecord, TaskRecordSchema, type TaskState } from './task.js';
import { TaskLog } from './task-log.js';

const TASKS_DOC = 'tasks';
const MAX_FILES_LISTED = 5_000;

/** What starts a task (§4.9.3): a description and an optional sandbox subdirectory. */
export const StartTaskSchema = z
  .object({
    task: z.string().trim().min(1, 'describe the task').max(50_000),
    subdir: SubdirSchema.optional(),
    /** The main conversation it reads (and may later return to); the configured one by default. */
    session: z.string().min(1).optional(),
  })
  .strict();

/** What the pod service is built from. */
export interface PodServiceDeps {
  readonly config: PodConfig;
  /** The reach plugin's paths and protected lists. */
  readonly host: ReachHost;
  readonly store: DurableStore;
  readonly sessions: Sessions;
  readonly bindings?: () => ReachBindings | undefined;
  readonly sandbox: () => SandboxService | undefined;
  /** The model; by default the OpenAI-compatible client of `config.model` (undefined: tasks are refused). */
  readonly model: ModelProvider | undefined;
  /** Where host-side writes (the agent's tools, exports) record their temp files, so a start after a kill removes them. */
  readonly journal?: TempRecorder;
}

/** The user-facing settings the panel and CLI show. */
export interface PodSettingsView {
  readonly sandboxRoot: string | null;
  readonly tools: readonly string[];
  readonly allowWrites: boolean;
  readonly readContext: boolean;
  readonly timeoutMs: number;
  readonly network: 'off' | 'on';
  readonly returnKinds: readonly ReturnKind[];
  readonly defaultReturn: ReturnKind;
  readonly exportEnabled: boolean;
  readonly allowRemember: boolean;
  readonly cleanup: PodConfig['cleanup'];
  readonly modelConfigured: boolean;
}

/** What a clean-up did. */
export interface CleanReport {
  readonly cleaned: readonly string[];
  readonly skipped: readonly { readonly id: string; readonly why: string }[];
}

/**
 * The Isolation Pod. It keeps its tasks to itself: the only write it ever makes to a
 * conversation is the one message of an explicit {@link PodService.returnToConversation}.
 */
export class PodService {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #logs = new Map<string, TaskLog>();
  readonly #running = new Map<string, AbortController>();
  readonly #waiters = new Map<string, (() => void)[]>();
  readonly #queue: string[] = [];
  readonly #exporter: Exporter;
  #root: string | undefined;
  #stopped = false;

  private constructor(private readonly deps: PodServiceDeps) {
    this.#root = deps.config.sandboxRoot;
    this.#exporter = new Exporter({
      store: deps.store,
      backupsDir: join(deps.store.dir, 'backups'),
      lists: deps.host.lists,
      task: (id) => this.#task(id),
      workspacesOf: (session) => this.#workspaces(session),
      enabled: deps.config.export.enabled,
      allowRemember: deps.config.export.allowRemember,
      confirmTtlMs: deps.config.export.confirmTtlMs,
      ...(deps.journal ? { journal: deps.journal } : {}),
    });
  }

  /** Opens the pod over its store; tasks a previous run left running are recorded as crashed, queued ones as failed. */
  static async open(deps: PodServiceDeps): Promise<PodService> {
    const service = new PodService(deps);
    const saved = (await deps.store.read(TASKS_DOC, z.array(TaskRecordSchema))) ?? [];
    let changed = false;
    for (const record of saved) {
      if (record.state === 'running' || record.state === 'queued') {
        const interrupted: TaskState = record.state === 'running' ? 'crashed' : 'failed';
        record.state = interrupted;
        record.error = record.state === 'crashed' ? 'the daemon stopped while the task was running' : 'the daemon stopped before the task started';
        record.finishedAt = Date.now();
        changed = true;
      }
      service.#tasks.set(record.id, record);
    }
    if (changed) await service.#save();
    return service;
  }

  /** The settings in force. */
  settings(): PodSettingsView {
    const c = this.deps.config;
    return {
      sandboxRoot: this.#root ?? null,
      tools: c.tools,
      allowWrites: c.allowWrites,
      readContext: c.readContext,
      timeoutMs: c.timeoutMs,
      network: c.network,
      returnKinds: c.return.kinds,
      defaultReturn: c.return.default,
      exportEnabled: c.export.enabled,
      allowRemember: c.export.allowRemember,
      cleanup: c.cleanup,
      modelConfigured: this.deps.model !== undefined,
    };
  }

  /** Changes the sandbox root for new tasks (§4.4.9); tasks already made keep theirs. Checked now. */
  async setSandboxRoot(path: string): Promise<string> {
    const real = await checkRoot(path, this.#rootContext(this.deps.config.session));
    this.#root = real;
    return real;
  }

  /** Starts a task. Refused, with what to do, when no sandbox root, model or sandbox is there. */
  async start(input: z.input<typeof StartTaskSchema>): Promise<TaskRecord> {
    const parsed = StartTaskSchema.safeParse(input);
    if (!parsed.success) throw new PodError('bad-input', `the task was refused: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ')}.`);
    const session = parsed.data.session ?? this.deps.config.session;
    const root = await checkRoot(this.#root, this.#rootContext(session));
    if (this.deps.model === undefined) {
      throw new PodError('no-model', "no model is configured for the pod, so the task was refused: set 'model.baseURL' and 'model.model' (an OpenAI-compatible endpoint) in the pod's config.");
    }
    if (this.deps.sandbox() === undefined) {
      throw new PodError('no-sandbox', "no sandbox backend is provided to the kernel (its 'sandbox' service), so the pod refused the task: its code only ever runs sandboxed, and the pod never builds a backend of its own. Start the daemon with a sandbox backend that works here (`aalis doctor` shows which), or add one to the kernel before the pod.");
    }
    const id = `pod-${randomBytes(4).toString('hex')}`;
    const subdir = parsed.data.subdir ?? this.deps.config.defaultSubdir;
    const dirs = await makeTaskDirs(root, subdir, id, this.#rootContext(session));
    const record: TaskRecord = {
      id,
      task: parsed.data.task,
      ...(subdir !== undefined ? { subdir } : {}),
      session,
      root,
      dirs,
      state: 'queued',
      createdAt: Date.now(),
      steps: 0,
      progress: 'queued',
    };
    this.#tasks.set(id, record);
    await this.#save();
    this.#queue.push(id);
    this.#pump();
    return { ...record };
  }

  /** Every task, newest first. */
  list(): TaskRecord[] {
    return [...this.#tasks.values()].sort((a, b) => b.createdAt - a.createdAt).map((t) => ({ ...t }));
  }

  /** One task. */
  show(id: string): TaskRecord {
    return { ...this.#task(id) };
  }

  /** Resolves when the task has ended. */
  async wait(id: string): Promise<TaskRecord> {
    const task = this.#task(id);
    if (!FINAL_STATES.has(task.state)) await new Promise<void>((resolve) => this.#waiters.set(id, [...(this.#waiters.get(id) ?? []), resolve]));
    return this.show(id);
  }

  /** The task's full log (tool calls, stdout, stderr, exit codes, refusals), optionally after a sequence number. */
  async logs(id: string, after = 0): Promise<LogEntry[]> {
    const task = this.#task(id);
    if (task.cleanedAt !== undefined) return [];
    return this.#logOf(task).read(after);
  }

  /** The files the task made in its working directory. */
  async files(id: string): Promise<TaskFile[]> {
    const task = this.#task(id);
    if (task.cleanedAt !== undefined) return [];
    const out: TaskFile[] = [];
    const visit = async (dir: string) => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (out.length >= MAX_FILES_LISTED) return;
        const p = join(dir, entry.name);
        const info = await lstat(p).catch(() => undefined);
        if (!info) continue;
        const kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'dir' : 'file';
        out.push({ path: relative(task.dirs.work, p), kind, size: info.size, modifiedAt: Math.round(info.mtimeMs) });
        if (kind === 'dir') await visit(p);
      }
    };
    await visit(task.dirs.work);
    return out;
  }

  /** The start of one of the task's files, as text (for the panel's preview and file returns). */
  async readFile(id: string, path: string, maxBytes = 64 * 1024): Promise<{ path: string; content: string; truncated: boolean; binary: boolean }> {
    const task = this.#task(id);
    const real = await realPathOf(path, task.dirs.work);
    if (!within(real, task.dirs.work) || real === task.dirs.work) throw new PodError('bad-input', `'${path}' is not a file in the task's directory.`);
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => {
      throw new PodError('not-found', `'${path}' does not exist in the task's directory.`);
    });
    try {
      if (!(await handle.stat()).isFile()) throw new PodError('bad-input', `'${path}' is not a regular file.`);
      const buffer = Buffer.alloc(maxBytes + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const bytes = buffer.subarray(0, Math.min(bytesRead, maxBytes));
      return { path: relative(task.dirs.work, real), content: bytes.toString('utf8'), truncated: bytesRead > maxBytes, binary: bytes.includes(0) };
    } finally {
      await handle.close();
    }
  }

  /** Stops a queued or running task. */
  async cancel(id: string): Promise<TaskRecord> {
    const task = this.#task(id);
    if (task.state === 'queued') {
      this.#queue.splice(this.#queue.indexOf(id), 1);
      await this.#finish(task, 'cancelled', 'cancelled by the user before it started');
    } else {
      this.#running.get(id)?.abort('cancelled');
    }
    return this.wait(id);
  }

  /**
   * Hands one short message to the main conversation, on the user's explicit choice (§4.6.5-9):
   * the conclusion, a file's content, a summary or the outcome. Exactly one message is appended;
   * nothing is exported.
   */
  async returnToConversation(id: string, input: { as: ReturnKind; file?: string; session?: string }): Promise<{ session: string; message: string }> {
    const task = this.#task(id);
    const c = this.deps.config.return;
    if (!c.kinds.includes(input.as)) throw new PodError('return-kind-off', `returning '${input.as}' is switched off in the pod's config (return.kinds: ${c.kinds.join(', ')}).`);
    if (!FINAL_STATES.has(task.state)) throw new PodError('not-finished', `task '${id}' is still ${task.state}; return its result once it has ended.`);
    let body: string;
    if (input.as === 'conclusion') {
      if (!task.conclusion) throw new PodError('not-finished', `task '${id}' has no conclusion (it ${statusOf(task)}); return its status instead.`);
      body = task.conclusion;
    } else if (input.as === 'summary') {
      body = summaryOf(task, c.maxChars) || statusOf(task);
    } else if (input.as === 'status') {
      body = statusOf(task);
    } else {
      if (input.file === undefined) throw new PodError('bad-input', 'choose the file whose content to return.');
      if (task.cleanedAt !== undefined) throw new PodError('not-found', `task '${id}' was cleaned up; its files are gone.`);
      const read = await this.readFile(id, input.file, c.maxChars * 4);
      if (read.binary) throw new PodError('bad-input', `'${input.file}' is not a text file; export it instead.`);
      body = read.content;
    }
    const session = input.session ?? task.session;
    const message = returnMessage(task, input.as, body, c.maxChars, input.file);
    await this.deps.sessions.append(session, { role: 'user', content: message });
    await this.deps.store.append('returns', { at: Date.now(), taskId: id, session, as: input.as, ...(input.file ? { file: input.file } : {}), chars: message.length });
    return { session, message };
  }

  /** Plans an export (§4.7); it is written only once confirmed, unless a remembered choice covers it. */
  exportFiles(request: ExportRequest): Promise<ExportStart> {
    return this.#exporter.start(request);
  }

  /** Confirms a planned export, once. */
  confirmExport(input: { token: string; onClash?: ClashChoice; remember?: boolean }): Promise<ExportRecord> {
    return this.#exporter.confirm(input);
  }

  /** Drops a planned export. */
  cancelExport(token: string): boolean {
    return this.#exporter.cancel(token);
  }

  /** The export log. */
  exports(): Promise<(ExportRecord & { undoneAt?: number })[]> {
    return this.#exporter.log();
  }

  /** Undoes an export. */
  undo(exportId: string): Promise<UndoRecord> {
    return this.#exporter.undo(exportId);
  }

  /** Remembered export choices. */
  grants(): ExportGrant[] {
    return this.#exporter.grants();
  }

  /** Revokes a remembered export choice. */
  revokeGrant(id: string): boolean {
    if (!this.#exporter.revoke(id)) throw new PodError('not-found', `there is no remembered export choice '${id}'.`);
    return true;
  }

  /** Removes the directory of one task, or of every ended task; never anything outside them. */
  async clean(target: { id: string } | { all: true }): Promise<CleanReport> {
    const ids = 'id' in target ? [this.#task(target.id).id] : [...this.#tasks.keys()];
    const cleaned: string[] = [];
    const skipped: { id: string; why: string }[] = [];
    for (const id of ids) {
      const task = this.#task(id);
      if (!FINAL_STATES.has(task.state)) {
        if ('id' in target) throw new PodError('still-running', `task '${id}' is ${task.state}; cancel it first.`);
        skipped.push({ id, why: task.state });
        continue;
      }
      if (task.cleanedAt !== undefined) {
        if ('id' in target) skipped.push({ id, why: 'already cleaned' });
        continue;
      }
      await this.#removeDir(task);
      cleaned.push(id);
    }
    await this.#save();
    return { cleaned, skipped };
  }

  /** Cleans ended tasks older than `cleanup.maxAgeHours` (§4.8.8). */
  async expire(now = Date.now()): Promise<CleanReport> {
    const limit = now - this.deps.config.cleanup.maxAgeHours * 3_600_000;
    const cleaned: string[] = [];
    for (const task of this.#tasks.values()) {
      if (!FINAL_STATES.has(task.state) || task.cleanedAt !== undefined) continue;
      if ((task.finishedAt ?? task.createdAt) > limit) continue;
      await this.#removeDir(task);
      cleaned.push(task.id);
    }
    if (cleaned.length > 0) await this.#save();
    return { cleaned, skipped: [] };
  }

  /** Stops every task (they end as cancelled) and waits for them. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const id of this.#queue.splice(0)) await this.#finish(this.#task(id), 'cancelled', 'the pod stopped before the task started');
    const running = [...this.#running.keys()];
    for (const controller of this.#running.values()) controller.abort('stopped');
    await Promise.all(running.map((id) => this.wait(id)));
  }

  #task(id: string): TaskRecord {
    const task = this.#tasks.get(id);
    if (!task) throw new PodError('not-found', `there is no pod task '${id}'; \`aalis pod list\` shows them.`);
    return task;
  }

  #logOf(task: TaskRecord): TaskLog {
    let log = this.#logs.get(task.id);
    if (!log) {
      log = new TaskLog(task.dirs.meta);
      this.#logs.set(task.id, log);
    }
    return log;
  }

  #workspaces(session: string): string[] {
    const binding = this.deps.bindings?.()?.bindingOf(session);
    const all = [...(binding ? [binding.home, ...binding.extraRoots] : []), this.deps.host.paths.workspace, ...this.deps.config.workspaceRoots];
    return [...new Set(all)];
  }

  #rootContext(session: string): RootContext {
    return { workspaces: this.#workspaces(session), daemonDirs: [this.deps.host.paths.data, this.deps.host.paths.install], lists: this.deps.host.lists };
  }

  async #removeDir(task: TaskRecord): Promise<void> {
    const real = await realPathOf(task.dirs.base);
    // Only the task's own directory, judged where it really is, and never a workspace.
    if (real !== task.dirs.base || !within(real, task.root) || real === task.root) throw new PodError('bad-sandbox-root', `task '${task.id}''s directory ${task.dirs.base} moved (now ${real}); it was not removed.`);
    if (this.#workspaces(task.session).some((w) => within(w, real) || within(real, w))) throw new PodError('root-in-workspace', `task '${task.id}''s directory overlaps a workspace; it was not removed.`);
    await rm(real, { recursive: true, force: true });
    task.cleanedAt = Date.now();
    this.#logs.delete(task.id);
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.deps.config.maxConcurrent && this.#queue.length > 0) {
      const id = this.#queue.shift()!;
      const controller = new AbortController();
      this.#running.set(id, controller);
      void this.#run(this.#task(id), controller).finally(() => {
        this.#running.delete(id);
        this.#pump();
      });
    }
  }

  async #run(task: TaskRecord, controller: AbortController): Promise<void> {
    const c = this.deps.config;
    const timer = setTimeout(() => controller.abort('timeout'), c.timeoutMs);
    const log = this.#logOf(task);
    try {
      task.state = 'running';
      task.startedAt = Date.now();
      task.progress = 'starting';
      await this.#save();
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
      if (!sandbox) throw new PodError('no-sandbox', 'the sandbox backend went away; nothing more runs.');
      const result = await runAgent({
        task: task.task,
        dirs: task.dirs,
        context,
        tools: c.tools,
        model: this.deps.model!,
        maxSteps: c.model.maxSteps,
        sandbox,
        policy: podPolicyOf(task.dirs, this.deps.host.lists, { allowWrites: c.allowWrites, network: c.network, localPorts: c.localPorts }),
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
      await this.#finish(task, result.state, result.error ?? (result.state === 'succeeded' ? 'done' : 'failed'));
    } catch (error) {
      const reason = controller.signal.aborted ? String(controller.signal.reason) : undefined;
      if (reason === 'timeout') await this.#finish(task, 'timed-out', `the task ran longer than ${c.timeoutMs} ms (timeoutMs) and was stopped`);
      else if (reason !== undefined) await this.#finish(task, 'cancelled', reason === 'stopped' ? 'the pod stopped' : 'cancelled by the user');
      else if (error instanceof ModelError) await this.#finish(task, 'failed', error.message);
      else await this.#finish(task, 'crashed', `the task crashed: ${(error as Error)?.message ?? String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async #finish(task: TaskRecord, state: TaskState, message: string): Promise<void> {
    task.state = state;
    task.finishedAt = Date.now();
    task.progress = state;
    if (state !== 'succeeded') task.error = shorten(message, 2_000);
    try {
      await this.#logOf(task).append({ kind: 'finished', state, message: shorten(message, 2_000) });
    } catch {
      // The log lives in the task's directory; a failing disk must not leave the task running.
    }
    await this.#save().catch(() => {});
    for (const resolve of this.#waiters.get(task.id) ?? []) resolve();
    this.#waiters.delete(task.id);
  }

  #save(): Promise<void> {
    return this.deps.store.write(TASKS_DOC, [...this.#tasks.values()]);
  }
}

/** The pod service descriptor: the CLI, the console panel and the HTTP API use it. */
export const pod = defineService<PodService>('pod');

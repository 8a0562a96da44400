import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { SandboxService } from '@aalis/api-reach';
import { type DurableStore, defineService, type Sessions, type TempRecorder } from '@aalis/core';
import type { ModelProvider } from '@aalis/model';
import type { ReachBindings, ReachInstance } from '@aalis/plugin-reach';
import { z } from 'zod';
import { type PodConfig, type ReturnKind, SubdirSchema } from './config.js';
import { PodError } from './errors.js';
import type { ClashChoice, ExportGrant, ExportRecord, ExportRequest, ExportStart, UndoRecord } from './export-types.js';
import { Exporter } from './exporter.js';
import { checkRoot, makeTaskDirs, type RootContext } from './sandbox-root.js';
import { returnMessage, statusOf, summaryOf } from './return-message.js';
import { FINAL_STATES, type LogEntry, type TaskFile, type TaskRecord, TaskRecordSchema, type TaskState } from './task.js';
import { type CleanReport, type CleanupDeps, cleanTasks, expireTasks } from './task-cleanup.js';
import { listTaskFiles, readTaskFile, type TaskFileRead } from './task-files.js';
import { TaskLog } from './task-log.js';
import { TaskRunner } from './task-runner.js';

const TASKS_DOC = 'tasks';

/** What starts a task: a description and an optional sandbox subdirectory. */
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
  readonly instance: ReachInstance;
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

/**
 * The Isolation Pod. It keeps its tasks to itself: the only write it ever makes to a
 * conversation is the one message of an explicit {@link PodService.returnToConversation}.
 */
export class PodService {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #logs = new Map<string, TaskLog>();
  readonly #runner: TaskRunner;
  readonly #cleanup: CleanupDeps;
  readonly #exporter: Exporter;
  #root: string | undefined;

  private constructor(private readonly deps: PodServiceDeps) {
    this.#root = deps.config.sandboxRoot;
    const save = () => this.#save();
    this.#runner = new TaskRunner({
      config: deps.config,
      lists: deps.instance.lists,
      sessions: deps.sessions,
      sandbox: deps.sandbox,
      model: deps.model,
      ...(deps.journal ? { journal: deps.journal } : {}),
      task: (id) => this.#task(id),
      logOf: (task) => this.#logOf(task),
      save,
    });
    this.#cleanup = {
      tasks: () => this.#tasks.values(),
      task: (id) => this.#task(id),
      workspacesOf: (session) => this.#workspaces(session),
      removed: (task) => this.#logs.delete(task.id),
      save,
    };
    this.#exporter = new Exporter({
      store: deps.store,
      backupsDir: join(deps.store.dir, 'backups'),
      lists: deps.instance.lists,
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
    // an export the daemon was killed in the middle of becomes an interrupted export undo can reverse
    await service.#exporter.recover();
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

  /** The conversation a task reads and returns to when none is named (the configured one). */
  get defaultSession(): string {
    return this.deps.config.session;
  }

  /** Changes the sandbox root for new tasks; tasks already made keep theirs. Checked now. */
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
    this.#runner.enqueue(id);
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
    await this.#runner.ended(this.#task(id));
    return this.show(id);
  }

  /** The task's full log (tool calls, stdout, stderr, exit codes, refusals), optionally after a sequence number. */
  async logs(id: string, after = 0): Promise<LogEntry[]> {
    const task = this.#task(id);
    if (task.cleanedAt !== undefined) return [];
    return this.#logOf(task).read(after);
  }

  /** The files the task made in its working directory. */
  files(id: string): Promise<TaskFile[]> {
    return listTaskFiles(this.#task(id));
  }

  /** The start of one of the task's files, as text (for the panel's preview and file returns). */
  readFile(id: string, path: string, maxBytes = 64 * 1024): Promise<TaskFileRead> {
    return readTaskFile(this.#task(id), path, maxBytes);
  }

  /** Stops a queued or running task. */
  async cancel(id: string): Promise<TaskRecord> {
    await this.#runner.cancel(this.#task(id));
    return this.show(id);
  }

  /**
   * Hands one short message to the main conversation, on the user's explicit choice:
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

  /** Plans an export; it is written only once confirmed, unless a remembered choice covers it. */
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
  clean(target: { id: string } | { all: true }): Promise<CleanReport> {
    return cleanTasks(target, this.#cleanup);
  }

  /** Cleans ended tasks older than `cleanup.maxAgeHours`. */
  expire(now = Date.now()): Promise<CleanReport> {
    return expireTasks(now - this.deps.config.cleanup.maxAgeHours * 3_600_000, this.#cleanup);
  }

  /** Stops every task (they end as cancelled) and waits for them. */
  stop(): Promise<void> {
    return this.#runner.stop();
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
    const all = [...(binding ? [binding.home, ...binding.extraRoots] : []), this.deps.instance.paths.workspace, ...this.deps.config.workspaceRoots];
    return [...new Set(all)];
  }

  #rootContext(session: string): RootContext {
    return { workspaces: this.#workspaces(session), daemonDirs: [this.deps.instance.paths.data, this.deps.instance.paths.install], lists: this.deps.instance.lists };
  }

  #save(): Promise<void> {
    return this.deps.store.write(TASKS_DOC, [...this.#tasks.values()]);
  }
}

/** The pod service descriptor: the CLI, the console panel and the HTTP API use it. */
export const pod = defineService<PodService>('pod');

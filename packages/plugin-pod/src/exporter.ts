import { createHash, randomBytes } from 'node:crypto';
import { lstat, readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative } from 'node:path';
import { compileRules, type ProtectedLists, preparePath } from '@aalis/api-reach';
import { copyFileAtomic, type DurableStore, makeDirs, openForRead, removeEmptyDir, removeFile, SafeFileError, shownBytes, type TempRecorder, utf8NameOf } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { PodError } from './errors.js';
import {
  type ClashChoice,
  type ExportGrant,
  type ExportLogRecord,
  ExportLogRecordSchema,
  type ExportPlan,
  type ExportRecord,
  type ExportRequest,
  ExportRequestSchema,
  type ExportStart,
  type PlannedItem,
  type UndoRecord,
} from './export-types.js';
import { within } from './sandbox-root.js';
import { FINAL_STATES, type TaskRecord } from './task.js';

const LOG = 'exports';
const MAX_EXPORT_FILES = 10_000;

/** What the exporter needs from the pod. */
export interface ExporterDeps {
  readonly store: DurableStore;
  readonly backupsDir: string;
  readonly lists: ProtectedLists;
  readonly task: (id: string) => TaskRecord;
  readonly workspacesOf: (session: string) => readonly string[];
  readonly enabled: boolean;
  readonly allowRemember: boolean;
  readonly confirmTtlMs: number;
  readonly now?: () => number;
  /** Where the copies record their temp files. */
  readonly journal?: TempRecorder;
}

interface Pending {
  readonly plan: ExportPlan;
  readonly expiresAt: number;
}

/**
 * Exports from a task's directory to the workspace, only as the user confirms: a plan first, a
 * single-use code to confirm it, a log of what went where and when, and undo that puts back what
 * was there. A remembered choice exists only when enabled and explicitly ticked, and is revocable.
 */
export class Exporter {
  readonly #pending = new Map<string, Pending>();
  readonly #grants = new Map<string, ExportGrant>();
  readonly #now: () => number;

  constructor(private readonly deps: ExporterDeps) {
    this.#now = deps.now ?? Date.now;
  }

  /** Plans an export. Under a remembered choice for this target it runs at once; otherwise it awaits confirmation. */
  async start(raw: ExportRequest): Promise<ExportStart> {
    if (!this.deps.enabled) throw new PodError('export-disabled', "export to the workspace is switched off in the pod's config (export.enabled).");
    const parsed = ExportRequestSchema.safeParse(raw);
    if (!parsed.success) throw new PodError('bad-input', `the export request was refused: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`).join('; ')}.`);
    const request = parsed.data;
    const plan = await this.#plan(request.taskId, request.files, request.to, request.mode, request.onClash, request.outsideWorkspace);
    const grant = this.deps.allowRemember ? [...this.#grants.values()].find((g) => g.session === plan.session && g.to === plan.to) : undefined;
    if (grant && (plan.clashes === 0 || plan.onClash !== undefined)) {
      return { state: 'done', record: await this.#execute(plan, plan.onClash, 'remembered', grant.id) };
    }
    this.#sweep();
    // hex: the code is pasted after `aalis pod confirm`, and a base64url one began with '-' one time in
    // 64, which the command line then read as an option (`unknown option`), not as the code
    const token = randomBytes(6).toString('hex');
    const expiresAt = this.#now() + this.deps.confirmTtlMs;
    this.#pending.set(token, { plan, expiresAt });
    return { state: 'needs-confirmation', token, expiresAt, plan, rememberAllowed: this.deps.allowRemember };
  }

  /** Confirms one planned export, once. `remember` needs `export.allowRemember` and is for this target and session only. */
  async confirm(input: { token: string; onClash?: ClashChoice; remember?: boolean }): Promise<ExportRecord> {
    this.#sweep();
    const pending = this.#pending.get(input.token);
    if (!pending) {
      throw new PodError('export-token', `there is no export waiting for the code '${input.token}': it was used already, expired or never issued. Start the export again; every export is confirmed on its own.`);
    }
    const onClash = input.onClash ?? pending.plan.onClash;
    if (pending.plan.clashes > 0 && onClash === undefined) {
      throw new PodError('export-clash', `${pending.plan.clashes} target file(s) already exist; choose overwrite, skip or rename to confirm. Nothing was written.`);
    }
    if (input.remember === true && !this.deps.allowRemember) {
      throw new PodError('remember-off', '"remember this choice" is switched off in the pod\'s config (export.allowRemember); confirm without it. Nothing was written.');
    }
    this.#pending.delete(input.token);
    let grantId: string | undefined;
    if (input.remember === true) {
      const grant: ExportGrant = { id: `grant-${randomBytes(4).toString('hex')}`, session: pending.plan.session, to: pending.plan.to, createdAt: this.#now() };
      this.#grants.set(grant.id, grant);
      grantId = grant.id;
    }
    return this.#execute(pending.plan, onClash, 'confirmed', grantId);
  }

  /** Drops a planned export without writing anything. */
  cancel(token: string): boolean {
    return this.#pending.delete(token);
  }

  /** The remembered choices in force. */
  grants(): ExportGrant[] {
    return [...this.#grants.values()];
  }

  /** Revokes a remembered choice: later exports to its target are confirmed one by one again. */
  revoke(id: string): boolean {
    return this.#grants.delete(id);
  }

  /** The export log, oldest first, with whether each export was undone. */
  async log(): Promise<(ExportRecord & { undoneAt?: number })[]> {
    const { records } = await this.deps.store.readLog<ExportLogRecord>(LOG, ExportLogRecordSchema);
    const undone = new Map(records.filter((r) => r.kind === 'undo').map((r) => [r.exportId, r.at]));
    return records.filter((r) => r.kind === 'export').map((r) => (undone.has(r.id) ? { ...r, undoneAt: undone.get(r.id)! } : r));
  }

  /**
   * Undoes one export: files it created are removed, files it overwrote get their old content
   * back, moved files go back into the task's directory. A target changed since is left alone.
   */
  async undo(exportId: string): Promise<UndoRecord> {
    const all = await this.log();
    const record = all.find((r) => r.id === exportId);
    if (!record) throw new PodError('not-found', `there is no export '${exportId}'; \`aalis pod exports\` lists them.`);
    if (record.undoneAt !== undefined) throw new PodError('undo-refused', `export '${exportId}' was already undone at ${new Date(record.undoneAt).toISOString()}.`);
    const items: UndoRecord['items'] = [];
    for (const item of [...record.items].reverse()) {
      if (item.action === 'skipped') {
        items.push({ target: item.target, action: 'nothing' });
        continue;
      }
      const current = await hashOf(item.target);
      if (current !== item.sha256) {
        items.push({ target: item.target, action: 'kept', note: current === undefined ? 'it is gone already' : 'it changed after the export, so it was left as it is' });
        continue;
      }
      // Through the safe file layer: a symlink planted at a name since the export is refused, never followed.
      await fileStep(`undoing export '${exportId}'`, async () => {
        if (record.mode === 'move') await copyFileAtomic(item.target, item.source, { createParents: true, ...this.#journal() });
        if (item.action === 'overwritten' && item.backup !== undefined) {
          await copyFileAtomic(item.backup, item.target, this.#journal());
          items.push({ target: item.target, action: 'restored' });
        } else {
          await removeFile(item.target);
          items.push({ target: item.target, action: 'removed' });
        }
      });
    }
    for (const dir of [...record.createdDirs].sort((a, b) => b.length - a.length)) {
      await removeEmptyDir(dir).catch(() => false); // only if empty: anything the user put there stays
    }
    const undo: UndoRecord = { kind: 'undo', exportId, at: this.#now(), items };
    await this.deps.store.append(LOG, undo);
    return undo;
  }

  /**
   * Turns every export a previous run started and never closed (the daemon was killed or crashed
   * mid-export) into an export record marked `interrupted`, so it is listed and `undo` reverses it.
   * What it wrote is rebuilt from the files: a planned target holding the source's content (or, for
   * a move, a target whose source is gone) was written; one it overwrote has its backup. A target
   * a rename would have made cannot be told from the user's files and is left out (said in the
   * record's error). Called when the pod starts.
   */
  async recover(): Promise<ExportRecord[]> {
    const { records } = await this.deps.store.readLog<ExportLogRecord>(LOG, ExportLogRecordSchema);
    const closed = new Set(records.filter((r) => r.kind === 'export' || r.kind === 'export-dropped').map((r) => r.id));
    const recovered: ExportRecord[] = [];
    for (const started of records) {
      if (started.kind !== 'export-started' || closed.has(started.id)) continue;
      const items: ExportRecord['items'] = [];
      let renamed = 0;
      for (const [index, planned] of started.items.entries()) {
        if (planned.clash && started.onClash === 'rename') {
          renamed++;
          continue;
        }
        if (planned.clash && started.onClash !== 'overwrite') continue; // skipped: never written
        const backup = join(started.backups, String(index));
        if (planned.clash && (await hashOf(backup)) === undefined) continue; // the backup comes first: none, no write
        const target = await hashOf(planned.target);
        if (target === undefined) continue;
        const source = await hashOf(planned.source);
        const written = source !== undefined ? source === target : started.mode === 'move';
        if (!written) continue;
        items.push({ source: planned.source, target: planned.target, action: planned.clash ? 'overwritten' : 'created', ...(planned.clash ? { backup } : {}), sha256: target });
      }
      const createdDirs: string[] = [];
      for (const dir of started.newDirs) if ((await lstat(dir).catch(() => undefined))?.isDirectory()) createdDirs.push(dir);
      const { kind: _, backups: __, items: ___, newDirs: ____, onClash: _____, ...rest } = started;
      const record: ExportRecord = {
        ...rest,
        kind: 'export',
        items,
        createdDirs,
        interrupted: true,
        error: `the daemon stopped during this export; the ${items.length} file(s) it had written are listed and can be undone${renamed > 0 ? ` (${renamed} renamed cop${renamed === 1 ? 'y' : 'ies'} it may have made, named '… (n)', are not listed: check the folder)` : ''}.`,
      };
      await this.deps.store.append(LOG, record);
      recovered.push(record);
    }
    return recovered;
  }

  #journal(): { journal?: TempRecorder } {
    return this.deps.journal ? { journal: this.deps.journal } : {};
  }

  #sweep(): void {
    const now = this.#now();
    for (const [token, p] of this.#pending) if (p.expiresAt <= now) this.#pending.delete(token);
  }

  async #plan(taskId: string, files: readonly string[], to: string, mode: ExportPlan['mode'], onClash: ClashChoice | undefined, outside: boolean): Promise<ExportPlan> {
    const task = this.deps.task(taskId);
    if (task.cleanedAt !== undefined) throw new PodError('export-source', `task '${taskId}' was cleaned up; its files are gone.`);
    // While the task's code may still run, its files can change under the export: wait for it to end.
    if (!FINAL_STATES.has(task.state)) throw new PodError('still-running', `task '${taskId}' is still ${task.state}; export its files once it has ended.`);
    const workspaces = this.deps.workspacesOf(task.session);
    if (!isAbsolute(to) && workspaces.length === 0) throw new PodError('export-target', `the target '${to}' is relative but no workspace is known; give an absolute folder.`);
    const target = await realPathOf(to, workspaces[0]);
    const inWorkspace = workspaces.some((w) => within(target, w));
    if (!inWorkspace && !outside) {
      throw new PodError(
        'export-target',
        `the target ${target} is outside the workspace (${workspaces.join(', ') || 'none known'}); the pod exports only into the workspace unless you say you mean another folder (--outside-workspace). Nothing was written.`,
      );
    }
    if (within(target, task.dirs.base) || within(task.dirs.base, target)) throw new PodError('export-target', `the target ${target} overlaps the task's own directory; choose a folder in the workspace.`);
    this.#checkTarget(target);
    const items: PlannedItem[] = [];
    for (const file of files) {
      const source = await realPathOf(file, task.dirs.work);
      if (!within(source, task.dirs.work) || source === task.dirs.work) {
        throw new PodError('export-source', `'${file}' is not a file or folder inside the task's directory ${task.dirs.work}; only what the task made can be exported.`);
      }
      const info = await lstat(source).catch(() => undefined);
      if (!info) throw new PodError('export-source', `'${file}' does not exist in the task's directory.`);
      const base = join(target, basename(source));
      if (info.isDirectory()) {
        for (const f of await walk(source)) items.push(await this.#item(task, f, join(base, relative(source, f))));
      } else if (info.isFile()) {
        items.push(await this.#item(task, source, base));
      } else {
        throw new PodError('export-source', `'${file}' is not a regular file or folder (a symlink?); it is not exported.`);
      }
      if (items.length > MAX_EXPORT_FILES) throw new PodError('export-source', `more than ${MAX_EXPORT_FILES} files; export fewer at a time.`);
    }
    if (items.length === 0) throw new PodError('export-source', 'there is nothing to export: the chosen folders are empty.');
    return { taskId, session: task.session, to: target, mode, ...(onClash !== undefined ? { onClash } : {}), items, clashes: items.filter((i) => i.clash).length };
  }

  async #item(task: TaskRecord, source: string, target: string): Promise<PlannedItem> {
    this.#checkTarget(target);
    const info = await stat(source);
    const clash = (await lstat(target).catch(() => undefined)) !== undefined;
    return { relative: relative(task.dirs.work, source), source, target, size: info.size, clash };
  }

  #checkTarget(target: string): void {
    const { lists } = this.deps;
    const p = preparePath(target, lists.platform);
    if (compileRules(lists.control, lists.platform).test(p)) throw new PodError('export-target', `${target} is in the daemon's control plane, which nothing writes; it cannot be requested.`);
    if (compileRules(lists.denyRead, lists.platform).test(p)) throw new PodError('export-target', `${target} is on the deny-read list (credentials, secrets); the pod does not write there.`);
    if (compileRules(lists.landing, lists.platform).test(p)) {
      throw new PodError('export-target', `${target} is a place other tools execute or obey on their own (a git hook, a shell profile, .envrc, …); the pod does not export there. Choose another name or folder.`);
    }
  }

  async #execute(plan: ExportPlan, onClash: ClashChoice | undefined, via: 'confirmed' | 'remembered', grantId: string | undefined): Promise<ExportRecord> {
    if (this.deps.task(plan.taskId).cleanedAt !== undefined) throw new PodError('export-source', `task '${plan.taskId}' was cleaned up after the plan; nothing was written.`);
    const id = `exp-${randomBytes(4).toString('hex')}`;
    const backups = join(this.deps.backupsDir, id);
    const createdDirs: string[] = [];
    const done: ExportRecord['items'] = [];
    // what the export record and its export-started record both say (ExportHeadSchema)
    const head = () => ({ id, at: this.#now(), taskId: plan.taskId, session: plan.session, mode: plan.mode, to: plan.to, via, ...(grantId !== undefined ? { grantId } : {}) });
    const record = (error?: string): ExportRecord => ({
      kind: 'export',
      ...head(),
      items: done,
      createdDirs,
      ...(error !== undefined ? { error } : {}),
    });
    // Durably before the first write: a daemon killed mid-export leaves this record open, and the
    // next start turns it into an interrupted export that undo can reverse (found by an attack:
    // SIGKILL during an export left the workspace changed with no record and no undo).
    const started: StartedRecord = {
      kind: 'export-started',
      ...head(),
      ...(onClash !== undefined ? { onClash } : {}),
      backups,
      items: plan.items.map((i) => ({ source: i.source, target: i.target, clash: i.clash })),
      newDirs: await missingDirs(plan.items.map((i) => dirname(i.target))),
    };
    await this.deps.store.append(LOG, started);
    try {
      await this.#copyAll(plan, onClash, backups, createdDirs, done);
    } catch (error) {
      // What was written before the failure is logged, so it can be seen and undone.
      if (done.length > 0 || createdDirs.length > 0) await this.deps.store.append(LOG, record((error as Error).message));
      else await this.deps.store.append(LOG, { kind: 'export-dropped', id, at: this.#now(), error: (error as Error).message });
      throw error;
    }
    const finished = record();
    await this.deps.store.append(LOG, finished);
    return finished;
  }

  async #copyAll(plan: ExportPlan, onClash: ClashChoice | undefined, backups: string, createdDirs: string[], done: ExportRecord['items']): Promise<void> {
    for (const [index, item] of plan.items.entries()) {
      // Judge again where the target really is now: a symlink may have appeared since the plan.
      const now = await realPathOf(item.target);
      if (now !== item.target) throw new PodError('export-target', `${item.target} now resolves to ${now}; the export stopped there (${done.length} file(s) done, listed in the export log).`);
      if ((await realPathOf(item.source)) !== item.source) throw new PodError('export-source', `${item.source} changed under the export (a symlink?); the export stopped there.`);
      await fileStep(`exporting to ${item.target}`, async () => createdDirs.push(...(await makeDirs(dirname(item.target)))));
      const exists = (await lstat(item.target).catch(() => undefined)) !== undefined;
      let target = item.target;
      let action: ExportRecord['items'][number]['action'] = 'created';
      let backup: string | undefined;
      if (exists) {
        if (onClash === 'skip' || onClash === undefined) {
          done.push({ source: item.source, target, action: 'skipped' });
          continue;
        }
        if (onClash === 'rename') {
          target = await freeName(item.target);
          action = 'renamed';
        } else {
          backup = join(backups, String(index));
          const from = item.target;
          const to = backup;
          await fileStep(`backing up ${item.target}`, () => copyFileAtomic(from, to, { createParents: true, mode: 0o600 }));
          action = 'overwritten';
        }
      }
      // The target is written at its judged path only: a symlink there is refused, the copy atomic.
      const to = target;
      await fileStep(`exporting to ${target}`, () => copyFileAtomic(item.source, to, this.#journal()));
      const sha256 = await hashOf(target);
      if (plan.mode === 'move') await fileStep(`moving ${item.source}`, () => removeFile(item.source));
      done.push({ source: item.source, target, action, ...(backup !== undefined ? { backup } : {}), ...(sha256 !== undefined ? { sha256 } : {}) });
    }
  }
}

/** The export-started record as the log keeps it. */
type StartedRecord = Extract<ExportLogRecord, { kind: 'export-started' }>;

/** The folders among `dirs` and their parents that do not exist yet (an export may make them). */
async function missingDirs(dirs: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const dir of new Set(dirs)) {
    for (let d = dir; dirname(d) !== d && !out.has(d); d = dirname(d)) {
      if ((await lstat(d).catch(() => undefined)) !== undefined) break;
      out.add(d);
    }
  }
  return [...out];
}

/** Every regular file under `dir`. Listed as bytes: a name that is not UTF-8 is refused, not exported as a U+FFFD name of another file or lost. */
async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, encoding: 'buffer' })) {
    const name = utf8NameOf(entry.name);
    if (name === undefined) {
      throw new PodError(
        'export-source',
        `${dir} holds an entry named '${shownBytes(entry.name)}', which is not UTF-8: it cannot be named exactly in the export, so nothing was exported. Rename it in the task's directory, or export the other entries one by one.`,
      );
    }
    const p = join(dir, name);
    if (entry.isDirectory()) out.push(...(await walk(p)));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Runs a step of the safe file layer; its refusal becomes the export's refusal, naming the rule. */
async function fileStep<T>(doing: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof SafeFileError) throw new PodError('export-target', `${doing} was refused (rule: ${error.code}): ${error.message}`);
    throw error;
  }
}

async function freeName(path: string): Promise<string> {
  const ext = extname(path);
  const stem = path.slice(0, path.length - ext.length);
  for (let n = 1; n < 10_000; n++) {
    const candidate = `${stem} (${n})${ext}`;
    if ((await lstat(candidate).catch(() => undefined)) === undefined) return candidate;
  }
  throw new PodError('export-clash', `no free name next to ${path}; choose overwrite or skip.`);
}

/** The SHA-256 of the regular file at `path` (never followed through a symlink); undefined when there is none. */
async function hashOf(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof openForRead>>;
  try {
    handle = await openForRead(path);
  } catch {
    return undefined;
  }
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(1024 * 1024);
    for (let at = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) return hash.digest('hex');
      hash.update(buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

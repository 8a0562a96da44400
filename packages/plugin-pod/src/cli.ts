import { describeError, errorText } from '@aalis/core';
import { type ReturnKind, RETURN_KINDS } from './config.js';
import { PodError } from './errors.js';
import { CLASH_CHOICES, type ClashChoice, type ExportRecord } from './export-types.js';
import { type PodArgs, PodUsageError, parsePodArgs } from './pod-args.js';
import type { PodService } from './service.js';
import type { LogEntry, TaskRecord } from './task.js';

/** Where the command writes. */
export interface PodIO {
  stdout(s: string): void;
  stderr(s: string): void;
}

const HELP: Record<string, string> = {
  pod: `aalis pod: side tasks in the Isolation Pod, outside the main conversation

Usage: aalis pod <command> [options]

  run "TASK" [--subdir NAME] [--wait]   start a task (its files go only into the sandbox root)
  list                                  the tasks and their state
  show ID                               one task: state, conclusion, directory
  logs ID                               its full log: tool calls, stdout, stderr, exit codes
  files ID                              the files it made
  return ID --as KIND [--file F]        add ONE short message to the main conversation
  export ID --files F[,F…] --to DIR     plan an export to the workspace (confirmed on its own)
  confirm CODE                          confirm one planned export
  exports                               the export log
  undo EXPORT_ID                        undo an export
  grants | revoke GRANT_ID              remembered export choices
  clean [ID|--all]                      remove a task's directory, or every ended task's
  expire                                clean ended tasks older than cleanup.maxAgeHours
  root PATH                             set the sandbox root for new tasks

Nothing the pod does reaches the main conversation unless you return it.
Run 'aalis pod <command> --help' for a command's options. Add --json for machine-readable output.`,
  run: `aalis pod run "TASK" [--subdir NAME] [--session ID] [--wait]

Starts a task in the Isolation Pod. It reads the main conversation (when readContext is on), reads
anything readable, and writes only into <sandboxRoot>/[NAME/]<task id>/. Without a sandbox root
configured the task is refused. --wait waits for it to end and prints its outcome.`,
  list: 'aalis pod list [--json]\n\nThe tasks, newest first, with state and progress.',
  show: 'aalis pod show ID [--json]\n\nOne task: its state, directory, conclusion or error.',
  logs: 'aalis pod logs ID [--json]\n\nThe full log of a task: model replies, tool calls, stdout, stderr, exit codes, refusals.',
  files: "aalis pod files ID [--json]\n\nThe files a task made in its working directory. A path that is not UTF-8 is shown by its bytes (\\xNN) and marked; with --json it carries notUtf8.",
  return: `aalis pod return ID --as conclusion|file|summary|status [--file F] [--session ID]

Adds exactly one short message to the main conversation: the task's conclusion, the content of one
of its files, a summary, or whether it succeeded. Nothing is exported.`,
  export: `aalis pod export ID --files F[,F…] --to DIR [--move] [--on-clash overwrite|skip|rename]
                 [--outside-workspace] [--yes [--remember]]

Plans copying (or with --move, moving) files or folders of a task into DIR, a folder in the
workspace (relative paths are taken from it). Nothing is written until this one export is
confirmed: with 'aalis pod confirm CODE', or --yes in the same command. Every export is confirmed
on its own. --remember (only when export.allowRemember is on) lets later exports to DIR go without
a confirmation until revoked. Nothing is returned to the conversation.`,
  confirm: 'aalis pod confirm CODE [--on-clash overwrite|skip|rename] [--remember]\n\nConfirms one planned export, once.',
  exports: 'aalis pod exports [--json]\n\nThe export log: what went where, when, and whether it was undone.',
  undo: 'aalis pod undo EXPORT_ID\n\nRemoves the files an export created, puts back what it overwrote, returns moved files to the task. Files changed since are left alone.',
  grants: 'aalis pod grants [--json]\n\nRemembered export choices.',
  revoke: 'aalis pod revoke GRANT_ID\n\nRevokes a remembered export choice; later exports to its folder are confirmed one by one again.',
  clean: 'aalis pod clean ID | --all\n\nRemoves the directory of one ended task, or of every ended task. Nothing outside them is touched.',
  expire: 'aalis pod expire\n\nCleans the ended tasks older than cleanup.maxAgeHours.',
  root: 'aalis pod root PATH\n\nSets the sandbox root for new tasks (outside the workspace and the project). Tasks made before keep theirs.',
};

const one = (p: PodArgs, flag: string): string | undefined => p.values.get(flag)?.at(-1);

function need(value: string | undefined, what: string, command: string): string {
  if (value === undefined || value === '') throw new PodUsageError(`${command} needs ${what}. See 'aalis pod ${command} --help'.`);
  return value;
}

function clash(value: string | undefined): ClashChoice | undefined {
  if (value === undefined) return undefined;
  if (!(CLASH_CHOICES as readonly string[]).includes(value)) throw new PodUsageError(`--on-clash takes ${CLASH_CHOICES.join(', ')}, not '${value}'.`);
  return value as ClashChoice;
}

function taskLine(t: TaskRecord): string {
  const what = t.task.length > 60 ? `${t.task.slice(0, 60)}…` : t.task;
  return `${t.id}  ${t.state.padEnd(9)}  ${t.progress}${t.cleanedAt ? ' (cleaned)' : ''}  ${what}`;
}

function logLine(e: LogEntry): string {
  const time = new Date(e.at).toISOString();
  switch (e.kind) {
    case 'started':
      return `${time} started in ${e.dir}; tools: ${e.tools.join(', ')}`;
    case 'context':
      return `${time} ${e.enabled ? `read ${e.messages} message(s) of the main conversation, read-only` : 'context reading is off'}`;
    case 'model':
      return `${time} model: ${e.content}${e.toolCalls.length ? ` -> ${e.toolCalls.join(', ')}` : ''}`;
    case 'tool-call':
      return `${time} call ${e.tool} ${JSON.stringify(e.params)}`;
    case 'tool-result': {
      const head = `${time} ${e.tool} ${e.ok ? 'ok' : 'failed'}${e.error ? `: ${e.error}` : ''}`;
      if (!e.run) return e.ok && e.value !== undefined ? `${head} ${JSON.stringify(e.value).slice(0, 500)}` : head;
      const r = e.run;
      return [head, `  exit code ${r.exitCode}${r.signal ? ` signal ${r.signal}` : ''}${r.timedOut ? ' (timed out)' : ''}`, r.stdout && `  stdout: ${r.stdout.trimEnd()}`, r.stderr && `  stderr: ${r.stderr.trimEnd()}`]
        .filter(Boolean)
        .join('\n');
    }
    case 'refused':
      return `${time} REFUSED ${e.tool} (${e.rule}): ${e.message}`;
    case 'finished':
      return `${time} finished: ${e.state} - ${e.message}`;
  }
}

function exportLine(r: ExportRecord & { undoneAt?: number }): string {
  return `${r.id}  ${new Date(r.at).toISOString()}  ${r.mode} ${r.items.length} file(s) of ${r.taskId} to ${r.to}${r.via === 'remembered' ? ' (remembered choice)' : ''}${r.undoneAt ? '  [undone]' : ''}`;
}

function printRecord(io: PodIO, r: ExportRecord): void {
  io.stdout(`exported (${r.id}, ${r.via}):\n`);
  for (const item of r.items) io.stdout(`  ${item.action.padEnd(11)} ${item.target}\n`);
  io.stdout(`undo with: aalis pod undo ${r.id}\n`);
}

type Awaitable<T> = T | Promise<T>;

/**
 * What `podCommand` needs of the pod: the service in-process, or a client of the daemon's
 * `/api/pod/…` routes (where every answer is async).
 */
export type PodCommandService = Pick<
  PodService,
  'start' | 'wait' | 'logs' | 'files' | 'returnToConversation' | 'exportFiles' | 'confirmExport' | 'exports' | 'undo' | 'clean' | 'expire' | 'setSandboxRoot'
> & {
  list(): Awaitable<ReturnType<PodService['list']>>;
  show(id: string): Awaitable<ReturnType<PodService['show']>>;
  grants(): Awaitable<ReturnType<PodService['grants']>>;
  revokeGrant(id: string): Awaitable<boolean>;
};

/**
 * `aalis pod …`: runs one subcommand against the pod service. Exit codes: 0 done, 1 refused
 * (the message says which rule and what to do), 2 usage error.
 */
export async function podCommand(argv: string[], io: PodIO, service: PodCommandService): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    io.stdout(`${HELP.pod}\n`);
    return 0;
  }
  const help = HELP[command];
  if (help === undefined || command === 'pod') {
    io.stderr(`aalis pod: unknown command '${command}'.\n\n${HELP.pod}\n`);
    return 2;
  }
  try {
    const p = parsePodArgs(rest);
    if (p.flags.has('--help')) {
      io.stdout(`${help}\n`);
      return 0;
    }
    const json = p.flags.has('--json');
    const out = (value: unknown, text: () => string) => io.stdout(json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
    const id = () => need(p.positional[0], 'an ID', command);
    switch (command) {
      case 'run': {
        const task = need(p.positional.join(' ').trim() || undefined, 'a task description in quotes', command);
        const subdir = one(p, '--subdir');
        const session = one(p, '--session');
        let t = await service.start({ task, ...(subdir !== undefined ? { subdir } : {}), ...(session !== undefined ? { session } : {}) });
        if (p.flags.has('--wait')) t = await service.wait(t.id);
        out(t, () => `${t.id} ${t.state}; files go to ${t.dirs.work}${t.conclusion ? `\n${t.conclusion}` : ''}${t.error ? `\n${t.error}` : ''}`);
        return p.flags.has('--wait') && t.state !== 'succeeded' ? 1 : 0;
      }
      case 'list': {
        const tasks = await service.list();
        out(tasks, () => (tasks.length === 0 ? 'no pod tasks' : tasks.map(taskLine).join('\n')));
        return 0;
      }
      case 'show': {
        const t = await service.show(id());
        out(t, () =>
          [`${t.id}: ${t.state} (${t.steps} step(s))`, `task: ${t.task}`, `directory: ${t.dirs.work}${t.cleanedAt ? ' (cleaned up)' : ''}`, t.conclusion && `conclusion: ${t.conclusion}`, t.error && `error: ${t.error}`]
            .filter(Boolean)
            .join('\n'),
        );
        return 0;
      }
      case 'logs': {
        const entries = await service.logs(id());
        out(entries, () => (entries.length === 0 ? 'no log (the task was cleaned up, or has not started)' : entries.map(logLine).join('\n')));
        return 0;
      }
      case 'files': {
        const files = await service.files(id());
        out(files, () => (files.length === 0 ? 'no files' : files.map((f) => `${f.kind === 'dir' ? 'dir ' : 'file'}  ${String(f.size).padStart(9)}  ${f.notUtf8 ? `${f.notUtf8}  (name not UTF-8)` : f.path}${f.unlisted ? `  (contents not listed: ${f.unlisted})` : ''}`).join('\n')));
        return 0;
      }
      case 'return': {
        const as = need(one(p, '--as'), `--as ${RETURN_KINDS.join('|')}`, command);
        if (!(RETURN_KINDS as readonly string[]).includes(as)) throw new PodUsageError(`--as takes ${RETURN_KINDS.join(', ')}, not '${as}'.`);
        const file = one(p, '--file');
        const session = one(p, '--session');
        const r = await service.returnToConversation(id(), { as: as as ReturnKind, ...(file !== undefined ? { file } : {}), ...(session !== undefined ? { session } : {}) });
        out(r, () => `added one message to conversation '${r.session}':\n${r.message}`);
        return 0;
      }
      case 'export': {
        const files = (p.values.get('--files') ?? []).flatMap((f) => f.split(',')).map((f) => f.trim()).filter(Boolean);
        if (files.length === 0) throw new PodUsageError("export needs --files F[,F…]. See 'aalis pod export --help'.");
        const to = need(one(p, '--to'), '--to DIR', command);
        const onClash = clash(one(p, '--on-clash'));
        const started = await service.exportFiles({ taskId: id(), files, to, mode: p.flags.has('--move') ? 'move' : 'copy', ...(onClash ? { onClash } : {}), outsideWorkspace: p.flags.has('--outside-workspace') });
        if (started.state === 'done') {
          if (json) out(started, () => '');
          else printRecord(io, started.record);
          return 0;
        }
        if (p.flags.has('--yes')) {
          const record = await service.confirmExport({ token: started.token, ...(onClash ? { onClash } : {}), ...(p.flags.has('--remember') ? { remember: true } : {}) });
          if (json) out(record, () => '');
          else printRecord(io, record);
          return 0;
        }
        if (p.flags.has('--remember')) throw new PodUsageError('--remember goes with --yes (or with confirm).');
        out(started, () =>
          [
            `export plan (${started.plan.mode} to ${started.plan.to}); nothing is written yet:`,
            ...started.plan.items.map((i) => `  ${i.relative} -> ${i.target}${i.clash ? '   [exists]' : ''}`),
            started.plan.clashes > 0 && !started.plan.onClash ? `${started.plan.clashes} target(s) exist: add --on-clash overwrite|skip|rename when confirming.` : '',
            `confirm this one export with: aalis pod confirm ${started.token}${started.rememberAllowed ? ' [--remember]' : ''}`,
            `(the code is valid until ${new Date(started.expiresAt).toISOString()})`,
          ]
            .filter(Boolean)
            .join('\n'),
        );
        return 0;
      }
      case 'confirm': {
        const onClash = clash(one(p, '--on-clash'));
        const record = await service.confirmExport({ token: id(), ...(onClash ? { onClash } : {}), ...(p.flags.has('--remember') ? { remember: true } : {}) });
        if (json) out(record, () => '');
        else printRecord(io, record);
        return 0;
      }
      case 'exports': {
        const log = await service.exports();
        out(log, () => (log.length === 0 ? 'no exports' : log.map(exportLine).join('\n')));
        return 0;
      }
      case 'undo': {
        const undo = await service.undo(id());
        out(undo, () => [`undid ${undo.exportId}:`, ...undo.items.map((i) => `  ${i.action.padEnd(8)} ${i.target}${i.note ? ` (${i.note})` : ''}`)].join('\n'));
        return 0;
      }
      case 'grants': {
        const grants = await service.grants();
        out(grants, () => (grants.length === 0 ? 'no remembered export choices' : grants.map((g) => `${g.id}  ${g.to}  (conversation ${g.session})`).join('\n')));
        return 0;
      }
      case 'revoke': {
        await service.revokeGrant(id());
        out({ revoked: p.positional[0] }, () => `revoked ${p.positional[0]}; exports to its folder are confirmed one by one again`);
        return 0;
      }
      case 'clean': {
        const all = p.flags.has('--all');
        if (all === (p.positional[0] !== undefined)) throw new PodUsageError("clean takes a task ID or --all. See 'aalis pod clean --help'.");
        const report = await service.clean(all ? { all: true } : { id: p.positional[0]! });
        out(report, () => [`cleaned ${report.cleaned.length} task(s)${report.cleaned.length ? `: ${report.cleaned.join(', ')}` : ''}`, ...report.skipped.map((s) => `skipped ${s.id}: ${s.why}`), ...report.failed.map((f) => `FAILED ${f.id}: ${f.why}`)].join('\n'));
        return 0;
      }
      case 'expire': {
        const report = await service.expire();
        out(report, () => [`cleaned ${report.cleaned.length} task(s) past their age`, ...report.failed.map((f) => `FAILED ${f.id}: ${f.why}`)].join('\n'));
        return 0;
      }
      case 'root': {
        const root = await service.setSandboxRoot(need(p.positional[0], 'a PATH', command));
        out({ sandboxRoot: root }, () => `sandbox root for new tasks: ${root}`);
        return 0;
      }
      default:
        io.stderr(`aalis pod: unknown command '${command}'.\n`);
        return 2;
    }
  } catch (error) {
    if (error instanceof PodUsageError) {
      io.stderr(`aalis pod ${command}: ${error.message}\n`);
      return 2;
    }
    if (error instanceof PodError) {
      io.stderr(`aalis pod ${command}: refused (${error.code}): ${errorText(error)}\n`);
      return 1;
    }
    io.stderr(`aalis pod ${command}: failed: ${describeError(error)}\n`);
    return 1;
  }
}

import { MovedAsideSchema } from '@aalis/api-reach';
import { z } from 'zod';

/** Where a task stands. The last five are final. */
export const TASK_STATES = ['queued', 'running', 'succeeded', 'failed', 'timed-out', 'crashed', 'cancelled'] as const;
/** One of {@link TASK_STATES}. */
export type TaskState = (typeof TASK_STATES)[number];
/** The states a task ends in. */
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(['succeeded', 'failed', 'timed-out', 'crashed', 'cancelled']);

/** A task's directory layout: the agent works and writes in `work`, scratch holds TMPDIR, HOME and caches, the log sits beside them read-only to the task. */
export const TaskDirsSchema = z.object({
  /** `<root>/[subdir/]<id>`: everything of the task, and nothing else. */
  base: z.string(),
  /** The agent's working directory and its output: what "files" lists and export takes from. */
  work: z.string(),
  /** TMPDIR, HOME and the language tools' caches. */
  scratch: z.string(),
  /** The pod's own notes about the task (its log): not writable by the task. */
  meta: z.string(),
  /** `base`'s device and inode when the pod made it: checked before it is removed, so a directory put in its place is never taken for it. Absent in records from before it was kept. */
  id: z.object({ dev: z.number(), ino: z.number() }).optional(),
});
/** A task's directories (real paths). */
export type TaskDirs = z.infer<typeof TaskDirsSchema>;

/** What the pod keeps about one task. */
export const TaskRecordSchema = z.object({
  id: z.string(),
  task: z.string(),
  subdir: z.string().optional(),
  /** The main conversation it read and may return to. */
  session: z.string(),
  /** The sandbox root in force when it started (changing the root later does not move it). */
  root: z.string(),
  dirs: TaskDirsSchema,
  state: z.enum(TASK_STATES),
  createdAt: z.number(),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  /** The agent's final answer. */
  conclusion: z.string().optional(),
  /** The agent's own short summary, when it gave one. */
  summary: z.string().optional(),
  /** Why it failed, timed out or crashed. */
  error: z.string().optional(),
  /** Model replies so far. */
  steps: z.number().default(0),
  /** The last thing it did, for the task list. */
  progress: z.string().default(''),
  /** Set once its directory was removed by clean-up. */
  cleanedAt: z.number().optional(),
});
/** What the pod keeps about one task. */
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** A command's outcome as the log keeps it. */
export const RunLogSchema = z.object({
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  stdout: z.string(),
  stderr: z.string(),
  truncated: z.boolean(),
  writeDenied: z.boolean(),
  deniedWrites: z.array(z.string()),
  /** Entries the sandbox removed or moved aside (api-reach's `MovedAsideSchema`); absent in logs written before it. */
  movedAside: z.array(MovedAsideSchema).optional(),
});

/** One line of a task's full log. */
export const LogEntrySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('started'), seq: z.number(), at: z.number(), task: z.string(), dir: z.string(), tools: z.array(z.string()) }),
  z.object({ kind: z.literal('context'), seq: z.number(), at: z.number(), messages: z.number(), chars: z.number(), enabled: z.boolean() }),
  z.object({ kind: z.literal('model'), seq: z.number(), at: z.number(), content: z.string(), toolCalls: z.array(z.string()) }),
  z.object({ kind: z.literal('tool-call'), seq: z.number(), at: z.number(), callId: z.string(), tool: z.string(), params: z.unknown() }),
  z.object({
    kind: z.literal('tool-result'),
    seq: z.number(),
    at: z.number(),
    callId: z.string(),
    tool: z.string(),
    ok: z.boolean(),
    value: z.unknown().optional(),
    run: RunLogSchema.optional(),
    error: z.string().optional(),
  }),
  z.object({ kind: z.literal('refused'), seq: z.number(), at: z.number(), callId: z.string(), tool: z.string(), rule: z.string(), message: z.string() }),
  z.object({ kind: z.literal('finished'), seq: z.number(), at: z.number(), state: z.enum(TASK_STATES), message: z.string() }),
]);
/** One line of a task's log. */
export type LogEntry = z.infer<typeof LogEntrySchema>;

/** A log entry before the log numbers and stamps it. */
export type NewLogEntry = LogEntry extends infer E ? (E extends LogEntry ? Omit<E, 'seq' | 'at'> : never) : never;

/** One file a task made, relative to its `work` directory. */
export interface TaskFile {
  readonly path: string;
  readonly kind: 'file' | 'dir' | 'symlink';
  readonly size: number;
  readonly modifiedAt: number;
  /** Set when the path is not UTF-8: its bytes as `\xNN`; `path` then shows U+FFFD and names no file. */
  readonly notUtf8?: string;
  /** Set on a directory whose contents are not in the listing (why: unreadable, changed, too deep). */
  readonly unlisted?: string;
}

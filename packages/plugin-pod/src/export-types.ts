import { z } from 'zod';

/** Copy leaves the sandbox file; move removes it once it reached the workspace. */
export const EXPORT_MODES = ['copy', 'move'] as const;
/** What happens when the target already exists: the user's choice. */
export const CLASH_CHOICES = ['overwrite', 'skip', 'rename'] as const;
/** One of {@link CLASH_CHOICES}. */
export type ClashChoice = (typeof CLASH_CHOICES)[number];

/** An export the user asked for; nothing is written until it is confirmed. */
export const ExportRequestSchema = z
  .object({
    taskId: z.string().min(1),
    /** Files or folders, relative to the task's working directory. */
    files: z.array(z.string().min(1)).min(1),
    /** The target folder: absolute, or relative to the session's workspace. */
    to: z.string().min(1),
    mode: z.enum(EXPORT_MODES).default('copy'),
    onClash: z.enum(CLASH_CHOICES).optional(),
    /** The user means a folder outside the workspace; never the control plane. */
    outsideWorkspace: z.boolean().default(false),
  })
  .strict();
/** An export the user asked for. */
export type ExportRequest = z.input<typeof ExportRequestSchema>;

/** One file of an export plan. */
export interface PlannedItem {
  /** Relative to the task's working directory. */
  readonly relative: string;
  readonly source: string;
  readonly target: string;
  readonly size: number;
  /** Something already exists at the target. */
  readonly clash: boolean;
}

/** What an export would do, shown to the user before they confirm. */
export interface ExportPlan {
  readonly taskId: string;
  readonly session: string;
  readonly to: string;
  readonly mode: (typeof EXPORT_MODES)[number];
  readonly onClash?: ClashChoice;
  readonly items: readonly PlannedItem[];
  readonly clashes: number;
}

/** What an export did to one file. */
export const ExportItemSchema = z.object({
  source: z.string(),
  target: z.string(),
  action: z.enum(['created', 'overwritten', 'skipped', 'renamed']),
  /** A copy of what the target held before, for undo. */
  backup: z.string().optional(),
  sha256: z.string().optional(),
});

/** What an export record and its `export-started` record both say: which export, of what, to where, allowed how. */
const ExportHeadSchema = z.object({
    id: z.string(),
    at: z.number(),
    taskId: z.string(),
    session: z.string(),
    mode: z.enum(EXPORT_MODES),
    to: z.string(),
    via: z.enum(['confirmed', 'remembered']),
    grantId: z.string().optional(),
});

/** The export log's records: what, where, when, and undos. */
export const ExportLogRecordSchema = z.discriminatedUnion('kind', [
  ExportHeadSchema.extend({
    kind: z.literal('export'),
    items: z.array(ExportItemSchema),
    createdDirs: z.array(z.string()),
    /** Set when the export stopped part-way: what is in `items` was written. */
    error: z.string().optional(),
    /** Set when the daemon stopped mid-export (killed, crashed) and the next start rebuilt `items` from the files. */
    interrupted: z.boolean().optional(),
  }),
  /**
   * Written (durably) before an export's first write: its plan, where its backups go and the
   * folders it may make. An export record of the same id (or `export-dropped`) closes it; one left
   * open when the daemon starts was interrupted, and becomes an export record `undo` can reverse.
   */
  ExportHeadSchema.extend({
    kind: z.literal('export-started'),
    onClash: z.enum(CLASH_CHOICES).optional(),
    backups: z.string(),
    items: z.array(z.object({ source: z.string(), target: z.string(), clash: z.boolean() })),
    /** Folders that did not exist when it started: it may have made them. */
    newDirs: z.array(z.string()),
  }),
  /** An export that stopped before writing anything: closes its `export-started`. */
  z.object({ kind: z.literal('export-dropped'), id: z.string(), at: z.number(), error: z.string() }),
  z.object({
    kind: z.literal('undo'),
    exportId: z.string(),
    at: z.number(),
    items: z.array(z.object({ target: z.string(), action: z.enum(['removed', 'restored', 'kept', 'nothing']), note: z.string().optional() })),
  }),
]);
/** One export log record. */
export type ExportLogRecord = z.infer<typeof ExportLogRecordSchema>;
/** An export as the log keeps it. */
export type ExportRecord = Extract<ExportLogRecord, { kind: 'export' }>;
/** An undo as the log keeps it. */
export type UndoRecord = Extract<ExportLogRecord, { kind: 'undo' }>;

/** A remembered "export to this folder" choice: only when enabled, only when ticked, revocable. */
export interface ExportGrant {
  readonly id: string;
  readonly session: string;
  readonly to: string;
  readonly createdAt: number;
}

/** What starting an export gave: a plan awaiting confirmation, or (under a remembered choice) the export done. */
export type ExportStart =
  | { readonly state: 'needs-confirmation'; readonly token: string; readonly expiresAt: number; readonly plan: ExportPlan; readonly rememberAllowed: boolean }
  | { readonly state: 'done'; readonly record: ExportRecord };

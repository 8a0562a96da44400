import { join } from 'node:path';
import { isSafeFileError, openForAppend, readFileNoFollow } from '@aalis/core';
import { z } from 'zod';

/** The tool manager's actions. */
export const TOOL_MANAGER_ACTIONS = ['create', 'update', 'build', 'delete'] as const;

/** One line of the tools audit log (002: time, who, action, tool, result). */
export const AuditEntrySchema = z.object({
  ts: z.string(),
  who: z.string(),
  action: z.enum(TOOL_MANAGER_ACTIONS),
  tool: z.string(),
  /** `started` is written before anything is done (audit first), then the outcome. */
  result: z.enum(['started', 'ok', 'refused', 'failed', 'build-failed']),
  detail: z.string().optional(),
});
/** A parsed {@link AuditEntrySchema}. */
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** The audit log's file name in the tools directory. */
export const AUDIT_FILE = '.tool_audit.log';

/** The append-only tools audit log, one JSON line an entry, written without following a symlink. */
export class ToolsAuditLog {
  readonly file: string;
  constructor(toolsDir: string) {
    this.file = join(toolsDir, AUDIT_FILE);
  }

  /** Appends one entry (fsynced) on a line of its own; a failure throws, and the caller then does nothing. */
  async append(entry: Omit<AuditEntry, 'ts'>): Promise<void> {
    const handle = await openForAppend(this.file, { mode: 0o600, createParents: true, dirMode: 0o755 });
    try {
      // A line a kill cut short must not swallow this one: start on a fresh line.
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      const cut = size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a;
      await handle.write(`${cut ? '\n' : ''}${JSON.stringify({ ts: new Date().toISOString(), ...entry })}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** The entries so far, newest last; a line that does not parse (a cut last line) is skipped. */
  async read(): Promise<AuditEntry[]> {
    let text: string;
    try {
      text = (await readFileNoFollow(this.file)).toString('utf8');
    } catch (error) {
      if (isSafeFileError(error) && error.code === 'missing') return [];
      throw error;
    }
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .flatMap((line) => {
        try {
          const parsed = AuditEntrySchema.safeParse(JSON.parse(line));
          return parsed.success ? [parsed.data] : [];
        } catch {
          return [];
        }
      });
  }
}

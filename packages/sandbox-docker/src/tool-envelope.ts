import type { SandboxRunResult } from '@aalis/api-reach';
import { z } from 'zod';

/** What a tool reads on stdin (002): which tool, its validated params, and who asked. */
export interface ToolEnvelope {
  readonly tool: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly userId?: string;
}

/** The kinds of a failed tool run, as the dispatcher's structured results name them. */
export const TOOL_ERROR_KINDS = ['timeout', 'killed', 'exit', 'bad-output', 'write-denied'] as const;
/** One of {@link TOOL_ERROR_KINDS}. */
export type ToolErrorKind = (typeof TOOL_ERROR_KINDS)[number];

/** A tool run's outcome: the JSON it printed, or why there is none. */
export type ToolOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly kind: ToolErrorKind; readonly message: string };

/** The envelope as one line of JSON for the tool's stdin. */
export function encodeToolEnvelope(envelope: ToolEnvelope): string {
  return `${JSON.stringify({ tool: envelope.tool, params: envelope.params, ...(envelope.userId === undefined ? {} : { user_id: envelope.userId }) })}\n`;
}

const Json = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not JSON' });
    return z.NEVER;
  }
});

/**
 * Reads a tool's result from a sandbox run: its stdout must be one JSON value; a timeout, a
 * signal, a non-zero exit or cut output is an error of its kind, never a success.
 */
export function toolOutcome(result: SandboxRunResult): ToolOutcome {
  const tail = result.stderr.trim().split('\n').slice(-3).join(' | ');
  if (result.timedOut) return { ok: false, kind: 'timeout', message: 'the tool ran past its time limit and was killed' };
  if (result.signal !== null) return { ok: false, kind: 'killed', message: `the tool was killed by ${result.signal} (a memory or pid limit, or an abort)` };
  if (result.exitCode !== 0) return { ok: false, kind: 'exit', message: `the tool exited with ${result.exitCode}${tail ? `: ${tail}` : ''}` };
  if (result.truncated) return { ok: false, kind: 'bad-output', message: 'the tool printed more than the output limit' };
  const parsed = Json.safeParse(result.stdout.trim());
  if (!parsed.success) return { ok: false, kind: 'bad-output', message: `the tool did not print one JSON value on stdout${tail ? ` (stderr: ${tail})` : ''}` };
  return { ok: true, value: parsed.data };
}

import type { SandboxRunResult } from '@aalis/api-reach';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '@aalis/core';
import { z } from 'zod';

/** Which call an envelope belongs to: the dispatcher's call id, the conversation and who asked. */
export interface ToolCallInfo {
  readonly id: string;
  readonly session: string;
  /** `platform:userId` of the authenticated speaker, or null when nobody was authenticated. */
  readonly principal: string | null;
}

/** What a tool reads on stdin (002): which tool, its validated params, and who asked. */
export interface ToolEnvelope {
  readonly tool: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly call?: ToolCallInfo;
  readonly userId?: string;
}

/**
 * Why one container or host run of a spec tool produced no value; `tool` is the tool's own
 * `{ ok: false }`. Not core's `TOOL_ERROR_KINDS` (why a tool call failed): plugin-spec-tools maps
 * each of these to one of core's.
 */
export const TOOL_RUN_FAILURE_KINDS = ['timeout', 'killed', 'exit', 'bad-output', 'write-denied', 'tool'] as const;
/** One of {@link TOOL_RUN_FAILURE_KINDS}. */
export type ToolRunFailureKind = (typeof TOOL_RUN_FAILURE_KINDS)[number];

/** A tool run's outcome: the value its result carried, or why there is none. */
export type ToolRunOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly kind: ToolRunFailureKind; readonly message: string };

/** The envelope as one line of JSON for the tool's stdin. */
export function encodeToolEnvelope(envelope: ToolEnvelope): string {
  return `${JSON.stringify({
    tool: envelope.tool,
    params: envelope.params,
    ...(envelope.call === undefined ? {} : { call: envelope.call }),
    ...(envelope.userId === undefined ? {} : { user_id: envelope.userId }),
  })}\n`;
}

/** The one JSON result a tool prints on stdout (002); anything else is `bad-output`. */
export const ToolResultSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), value: z.unknown() }).strict(),
  z.object({ ok: z.literal(false), kind: z.string().min(1).max(64), message: z.string().max(16_384) }).strict(),
]);

const Json = z.string().transform((text, ctx) => {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not JSON' });
    return z.NEVER;
  }
  // the value goes on to the model and the console as JSON: one nested past the limit would end
  // their serialization in a stack overflow, so it is bad output like any other
  if (jsonNestsDeeperThan(value)) {
    ctx.addIssue({ code: 'custom', message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` });
    return z.NEVER;
  }
  return value;
});

/**
 * Reads a tool's result from a sandbox run: its stdout must be one JSON result
 * `{ ok: true, value }` or `{ ok: false, kind, message }`; a timeout, a signal, a non-zero exit,
 * cut output or anything else on stdout is an error of its kind, never a success and never text
 * taken apart for meaning. A failure (not a timeout or kill) of a run the sandbox refused a write
 * is `write-denied`, naming the refused paths.
 */
export function toolRunOutcome(result: SandboxRunResult): ToolRunOutcome {
  const outcome = plainOutcome(result);
  // A tool that failed after the sandbox refused it a write failed because of that refusal: said
  // as such (with the paths), not as a bare exit code. One that succeeded anyway keeps its value.
  if (!outcome.ok && result.writeDenied && outcome.kind !== 'timeout' && outcome.kind !== 'killed') {
    return { ok: false, kind: 'write-denied', message: `${writeDeniedMessage(result)} (${outcome.message})` };
  }
  return outcome;
}

function writeDeniedMessage(result: SandboxRunResult): string {
  const where = result.deniedWrites.length > 0 ? result.deniedWrites.join(', ') : 'a path it did not name';
  const moved = result.movedAside ?? [];
  const aside = moved.length > 0 ? `; the sandbox removed ${moved.map((m) => m.path).join(', ')}` : '';
  return `the sandbox refused the tool a write to ${where}, outside what its profile may write${aside}`;
}

function plainOutcome(result: SandboxRunResult): ToolRunOutcome {
  const tail = result.stderr.trim().split('\n').slice(-3).join(' | ');
  if (result.timedOut) return { ok: false, kind: 'timeout', message: 'the tool ran past its time limit and was killed' };
  if (result.signal !== null) return { ok: false, kind: 'killed', message: `the tool was killed by ${result.signal} (a memory or pid limit, or an abort)` };
  if (result.exitCode !== 0) return { ok: false, kind: 'exit', message: `the tool exited with ${result.exitCode}${tail ? `: ${tail}` : ''}` };
  if (result.truncated) return { ok: false, kind: 'bad-output', message: 'the tool printed more than the output limit' };
  const parsed = Json.pipe(ToolResultSchema).safeParse(result.stdout.trim());
  if (!parsed.success) {
    const deep = parsed.error.issues.find((i) => i.message.startsWith('JSON nested deeper'));
    return {
      ok: false,
      kind: 'bad-output',
      message: deep !== undefined ? `the tool printed ${deep.message}, which is refused${tail ? ` (stderr: ${tail})` : ''}` : `the tool did not print one JSON result ({"ok":true,"value":…} or {"ok":false,"kind":…,"message":…}) on stdout${tail ? ` (stderr: ${tail})` : ''}`,
    };
  }
  if (!parsed.data.ok) return { ok: false, kind: 'tool', message: `the tool reported ${parsed.data.kind}: ${parsed.data.message}` };
  return { ok: true, value: parsed.data.value };
}

import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { ApprovalService } from './approval.js';
import { AalisError, type AalisErrorOptions, describeError, errorText, isAalisError } from './aalis-error.js';
import { escapeInvisible } from './well-formed.js';
import { defineService } from './service.js';
import type { OriginTurn } from './turn.js';

/** How much harm a tool can do; `high` passes the approval gate before its handler runs. */
export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
/** One of {@link RISK_LEVELS}. */
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Why a tool call did not produce a value. */
export const TOOL_ERROR_KINDS = [
  'unknown-tool',
  'invalid-params',
  'rejected',
  'expired',
  'denied',
  'unavailable',
  'timeout',
  'failed',
  /** A tool program's output was not the one JSON result the envelope protocol asks for (002). */
  'bad-output',
] as const;
/** One of {@link TOOL_ERROR_KINDS}. */
export type ToolErrorKind = (typeof TOOL_ERROR_KINDS)[number];

/** A tool call's result: a value, or a structured error. Never a string to be parsed. */
export type ToolOutcome<T = unknown> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly kind: ToolErrorKind; readonly message: string };

/** Thrown by a handler to end the call with a structured error of a given kind; `kind` is its `code`. */
export class ToolError extends AalisError<ToolErrorKind> {
  override readonly name = 'ToolError';
  constructor(
    readonly kind: ToolErrorKind,
    message: string,
    options?: AalisErrorOptions,
  ) {
    super(kind, message, options);
  }
}

/**
 * What a call context carries beyond the basics; packages add to it by declaration merging
 * (plugin-reach adds the call's `credential`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging across packages
export interface ToolCallExtensions {}

/** What a handler receives about its call. */
export type ToolCallContext = {
  readonly turn: OriginTurn;
  readonly callId: string;
  readonly tool: string;
  readonly signal: AbortSignal;
} & Partial<ToolCallExtensions>;

/** A tool: a name, a parameter schema, a risk level and a handler. */
export interface Tool<P extends z.ZodType = z.ZodType, R = unknown> {
  readonly name: string;
  readonly description: string;
  readonly params: P;
  readonly risk: RiskLevel;
  /** One line for the approval prompt; defaults to the tool name and its parameters. */
  summarize?(params: z.output<P>): string;
  /**
   * Checked before the approval gate, with the call's extensions as the handler gets them: a call
   * it refuses (it throws, a {@link ToolError} with its kind) is refused without asking anyone.
   * For what would refuse the call whatever the answer (a non-owner's call to a tool whose only
   * effect is local): an ask the owner cannot usefully answer is never raised.
   */
  admit?(ctx: ToolCallContext, params: z.output<P>): void | Promise<void>;
  handler(ctx: ToolCallContext, params: z.output<P>): R | Promise<R>;
}

/** A tool of any parameter and result type, as lists of tools hold them. */
// biome-ignore lint/suspicious/noExplicitAny: lists hold tools of every parameter type
export type AnyTool = Tool<any, any>;

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Declares a tool. */
export function defineTool<P extends z.ZodType, R>(tool: Tool<P, R>): Tool<P, R> {
  if (!TOOL_NAME.test(tool.name)) {
    throw new TypeError(`defineTool: '${tool.name}' is not a tool name; use lower-case letters, digits and '_' (e.g. 'read_file').`);
  }
  return Object.freeze({ ...tool });
}

/** One call to dispatch. */
export interface ToolCallRequest {
  readonly tool: string;
  readonly params: unknown;
  readonly turn: OriginTurn;
  readonly callId?: string;
  readonly signal?: AbortSignal;
}

/** Options of a {@link ToolDispatcher}. */
export interface DispatcherOptions {
  /** The approval service for the high-risk gate; without one, high-risk tools are refused (fail closed). */
  readonly approval?: () => ApprovalService | undefined;
}

/** Adds to a call's context before its handler runs (plugin-reach adds the credential here). */
export type ToolCallExtender = (call: { turn: OriginTurn; tool: string; callId: string }) => Promise<Partial<ToolCallExtensions>>;

/** Holds tools by name and dispatches calls: validate, gate, extend, run, structure the result. */
export class ToolDispatcher {
  // biome-ignore lint/suspicious/noExplicitAny: tools of every parameter type live in one map
  readonly #tools = new Map<string, Tool<any, unknown>>();
  readonly #extenders = new Set<ToolCallExtender>();

  constructor(private readonly options: DispatcherOptions = {}) {}

  /** Adds a tool; the returned function removes it. */
  register<P extends z.ZodType, R>(tool: Tool<P, R>): () => void {
    if (this.#tools.has(tool.name)) throw new TypeError(`tool '${tool.name}' is already registered.`);
    this.#tools.set(tool.name, tool);
    return () => {
      if (this.#tools.get(tool.name) === tool) this.#tools.delete(tool.name);
    };
  }

  /** Adds an extender run for every call after the gate; the returned function removes it. */
  extend(extender: ToolCallExtender): () => void {
    this.#extenders.add(extender);
    return () => {
      this.#extenders.delete(extender);
    };
  }

  /** The registered tools' names, descriptions and risk levels. */
  list(): { name: string; description: string; risk: RiskLevel }[] {
    return [...this.#tools.values()].map(({ name, description, risk }) => ({ name, description, risk }));
  }

  /** A registered tool's parameter schema (to publish it, e.g. as JSON Schema); `undefined` for an unknown name. */
  parametersOf(name: string): z.ZodType | undefined {
    return this.#tools.get(name)?.params;
  }

  /**
   * Runs one call. The parameters are validated first (nothing runs on a bad one); a high-risk
   * tool then passes the one approval gate, whatever its output type; the handler runs last.
   */
  async dispatch<T = unknown>(request: ToolCallRequest): Promise<ToolOutcome<T>> {
    const tool = this.#tools.get(request.tool);
    if (!tool) {
      const known = [...this.#tools.keys()].join(', ') || 'none';
      return fail('unknown-tool', `there is no tool '${request.tool}'; the tools are: ${known}.`);
    }
    const parsed = tool.params.safeParse(request.params);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i: z.core.$ZodIssue) => `'${i.path.map(String).join('.') || '(params)'}': ${i.message}`);
      return fail('invalid-params', `tool '${tool.name}' refused its parameters, nothing ran: ${issues.join('; ')}.`);
    }
    const callId = request.callId ?? randomUUID();
    const signal = request.signal ?? new AbortController().signal;
    // the extensions are made again after the gate: an answer may come minutes later
    const contextOf = async (): Promise<ToolCallContext> => {
      const extensions: Partial<ToolCallExtensions> = {};
      for (const extender of this.#extenders) Object.assign(extensions, await extender({ turn: request.turn, tool: tool.name, callId }));
      return { ...extensions, turn: request.turn, callId, tool: tool.name, signal };
    };
    if (tool.admit) {
      try {
        await tool.admit(await contextOf(), parsed.data);
      } catch (error) {
        return failureOf(tool.name, error);
      }
    }
    // A handler runs only once the gate said yes, so the context carries no "approved" flag to check.
    if (tool.risk === 'high') {
      const gate = this.options.approval?.();
      if (!gate) {
        return fail('rejected', `tool '${tool.name}' is high-risk and needs approval, but no approval service is running; nothing ran.`);
      }
      // The subject's summary is shown as it is (the console, the reviewer): escaped here, once for every tool.
      const summary = escapeInvisible(tool.summarize?.(parsed.data) ?? `${tool.name} ${JSON.stringify(parsed.data)}`);
      const outcome = await gate.ask({
        turn: request.turn,
        subject: { kind: 'tool', tool: tool.name, summary, rule: 'high-risk' },
        summary: `run the high-risk tool ${summary}`,
        rememberable: false,
      });
      if (outcome.outcome === 'rejected') return fail('rejected', `tool '${tool.name}' was not approved: ${outcome.reason}. Nothing ran.`);
      if (outcome.outcome === 'expired') return fail('expired', `the approval for tool '${tool.name}' expired after ${outcome.afterMs} ms; nothing ran.`);
    }
    try {
      const value = await tool.handler(await contextOf(), parsed.data);
      return { ok: true, value: value as T };
    } catch (error) {
      return failureOf(tool.name, error);
    }
  }
}

/** A throw of a tool's handler or admission, as the call's outcome. */
function failureOf(tool: string, error: unknown): ToolOutcome<never> {
  if (error instanceof ToolError) return fail(error.kind, error.message);
  // an AalisError's code and fix reach the caller too: which rule refused, and what to do
  if (isAalisError(error)) return fail('failed', `tool '${tool}' failed (${error.code}): ${errorText(error)}`);
  return fail('failed', `tool '${tool}' failed: ${describeError(error)}`);
}

function fail(kind: ToolErrorKind, message: string): ToolOutcome<never> {
  return { ok: false, kind, message };
}

/** The tool registry and dispatcher, as a service. */
export const tools = defineService<ToolDispatcher>('tools');

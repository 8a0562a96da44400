import { z } from 'zod';

/** One message of the agent's own conversation, in the chat-completions shape. */
export type AgentMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly tool_calls?: readonly ModelToolCall[] }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

/** A tool call the model asked for; `arguments` is the JSON text the model wrote. */
export interface ModelToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** A tool offered to the model. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of its parameters. */
  readonly parameters: Record<string, unknown>;
}

/** What the model answered. */
export interface ModelReply {
  readonly content: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly finishReason: string | null;
}

/** A model service the agent can use. {@link createChatCompletionsClient} is the default. */
export interface ModelProvider {
  complete(request: { messages: readonly AgentMessage[]; tools: readonly ModelTool[]; signal: AbortSignal }): Promise<ModelReply>;
}

/** The model service failed or answered something unusable; the message says which and what to check. */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(
    readonly reason: 'http' | 'unreachable' | 'timeout' | 'aborted' | 'bad-reply',
    message: string,
  ) {
    super(message);
  }
}

const ReplySchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().min(1),
                type: z.literal('function').optional(),
                function: z.object({ name: z.string().min(1), arguments: z.string().default('{}') }),
              }),
            )
            .nullable()
            .optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
});

/** Options of the OpenAI-compatible client. */
export interface ChatCompletionsOptions {
  readonly baseURL: string;
  readonly model: string;
  readonly apiKey?: string;
  readonly requestTimeoutMs: number;
  readonly temperature?: number;
}

/**
 * A client for any OpenAI-compatible `POST {baseURL}/chat/completions` endpoint with function
 * tools. Each request has its own timeout besides the caller's signal; every failure is a
 * {@link ModelError} naming the endpoint and what went wrong.
 */
export function createChatCompletionsClient(options: ChatCompletionsOptions): ModelProvider {
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  return {
    async complete({ messages, tools, signal }) {
      const timeout = AbortSignal.timeout(options.requestTimeoutMs);
      const body = {
        model: options.model,
        messages,
        ...(tools.length > 0
          ? { tools: tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })), tool_choice: 'auto' }
          : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      };
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
          body: JSON.stringify(body),
          signal: AbortSignal.any([signal, timeout]),
        });
      } catch (error) {
        throw failure(error, url, signal, timeout, options.requestTimeoutMs);
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw failure(error, url, signal, timeout, options.requestTimeoutMs);
      }
      if (!response.ok) {
        const hint = response.status === 401 || response.status === 403 ? ' Check the API key (model.apiKey or model.apiKeyEnv).' : response.status === 404 ? ' Check model.baseURL and model.model.' : '';
        throw new ModelError('http', `the model service at ${url} answered HTTP ${response.status}: ${text.slice(0, 300)}.${hint}`);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new ModelError('bad-reply', `the model service at ${url} answered something that is not JSON: ${text.slice(0, 200)}`);
      }
      const parsed = ReplySchema.safeParse(json);
      if (!parsed.success) {
        throw new ModelError('bad-reply', `the model service at ${url} answered JSON that is not a chat completion (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''}).`);
      }
      const choice = parsed.data.choices[0]!;
      return {
        content: choice.message.content ?? '',
        toolCalls: (choice.message.tool_calls ?? []).map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })),
        finishReason: choice.finish_reason ?? null,
      };
    },
  };
}

function failure(error: unknown, url: string, signal: AbortSignal, timeout: AbortSignal, ms: number): ModelError {
  if (signal.aborted) return new ModelError('aborted', `the request to the model service at ${url} was stopped (the task ended or timed out).`);
  if (timeout.aborted) return new ModelError('timeout', `the model service at ${url} did not answer within ${ms} ms (model.requestTimeoutMs).`);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error).message;
  return new ModelError('unreachable', `the model service at ${url} could not be reached (${detail}). Check model.baseURL and that the service is running.`);
}

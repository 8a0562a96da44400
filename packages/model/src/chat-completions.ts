import { z } from 'zod';
import type { ModelProvider, ModelReply, ModelRequest, ModelToolCall } from './messages.js';
import { ModelError } from './model-error.js';
import { sseData } from './sse-reader.js';

const ToolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1), arguments: z.string().default('{}') }),
});

const ReplySchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional(), tool_calls: z.array(ToolCallSchema).nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
});

/** One streamed chunk: a delta of text and of tool calls (each by its index). */
const ChunkSchema = z.object({
  choices: z.array(
    z.object({
      delta: z
        .object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                index: z.number().int().min(0).max(127),
                id: z.string().optional(),
                function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
              }),
            )
            .nullable()
            .optional(),
        })
        .optional(),
      finish_reason: z.string().nullable().optional(),
    }),
  ),
});

/** Options of the OpenAI-compatible client. */
export interface ChatCompletionsOptions {
  /** e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended. */
  readonly baseURL: string;
  readonly model: string;
  readonly apiKey?: string;
  /** One request's limit, besides the caller's signal. */
  readonly requestTimeoutMs: number;
  readonly temperature?: number;
}

/**
 * A client for any OpenAI-compatible `POST {baseURL}/chat/completions` endpoint with function
 * tools, streamed (`stream: true`, SSE `data:` chunks) when the request has `onDelta`. Each
 * request has its own timeout besides the caller's signal; every failure is a {@link ModelError}
 * naming the endpoint, what went wrong and what to check.
 */
export function createChatCompletionsClient(options: ChatCompletionsOptions): ModelProvider {
  const url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`;
  return {
    async complete(request) {
      const timeout = AbortSignal.timeout(options.requestTimeoutMs);
      const fail = (error: unknown) => failure(error, url, request.signal, timeout, options.requestTimeoutMs);
      const streamed = request.onDelta !== undefined;
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
          body: JSON.stringify(bodyOf(options, request, streamed)),
          signal: AbortSignal.any([request.signal, timeout]),
        });
      } catch (error) {
        throw fail(error);
      }
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        const hint =
          response.status === 401 || response.status === 403 ? ' Check the API key (model.apiKey or model.apiKeyEnv).' : response.status === 404 ? ' Check model.baseURL and model.model.' : '';
        throw new ModelError('http', `the model service at ${url} answered HTTP ${response.status}: ${text.slice(0, 300)}.${hint}`);
      }
      const isStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
      try {
        if (streamed && isStream && response.body) return await readStream(response.body, url, request.onDelta ?? (() => {}));
        const reply = parseReply(await response.text(), url);
        // A service that ignored `stream: true` still gives the caller its text, in one piece.
        if (streamed && reply.content !== '') request.onDelta?.(reply.content);
        return reply;
      } catch (error) {
        if (error instanceof ModelError) throw error;
        throw fail(error);
      }
    },
  };
}

function bodyOf(options: ChatCompletionsOptions, request: ModelRequest, stream: boolean): Record<string, unknown> {
  return {
    model: options.model,
    messages: request.messages,
    ...(request.tools.length > 0
      ? { tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })), tool_choice: 'auto' }
      : {}),
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

function parseReply(text: string, url: string): ModelReply {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ModelError('bad-reply', `the model service at ${url} answered something that is not JSON: ${text.slice(0, 200)}. Check that model.baseURL points at an OpenAI-compatible API.`);
  }
  const parsed = ReplySchema.safeParse(json);
  if (!parsed.success) throw notACompletion(url, parsed.error);
  const choice = parsed.data.choices[0]!;
  return {
    content: choice.message.content ?? '',
    toolCalls: (choice.message.tool_calls ?? []).map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })),
    finishReason: choice.finish_reason ?? null,
  };
}

async function readStream(body: ReadableStream<Uint8Array>, url: string, onDelta: (text: string) => void): Promise<ModelReply> {
  let content = '';
  let finishReason: string | null = null;
  let ended = false;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for await (const data of sseData(body)) {
    if (data.trim() === '[DONE]') {
      ended = true;
      break;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new ModelError('bad-reply', `the model service at ${url} streamed a chunk that is not JSON: ${data.slice(0, 200)}. Check that model.baseURL points at an OpenAI-compatible API.`);
    }
    const parsed = ChunkSchema.safeParse(json);
    if (!parsed.success) throw notACompletion(url, parsed.error, 'a streamed chunk');
    const choice = parsed.data.choices[0];
    if (!choice) continue;
    const text = choice.delta?.content;
    if (text) {
      content += text;
      onDelta(text);
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const call = calls.get(piece.index) ?? { id: '', name: '', arguments: '' };
      if (piece.id) call.id = piece.id;
      call.name += piece.function?.name ?? '';
      call.arguments += piece.function?.arguments ?? '';
      calls.set(piece.index, call);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  if (!ended && finishReason === null) {
    throw new ModelError('bad-reply', `the model service at ${url} ended its stream before the reply was complete (no finish_reason, no [DONE]). Check the service's logs.`);
  }
  const toolCalls: ModelToolCall[] = [];
  for (const [index, call] of [...calls].sort(([a], [b]) => a - b)) {
    if (call.id === '' || call.name === '') {
      throw new ModelError('bad-reply', `the model service at ${url} streamed tool call #${index} without an id or a name. Check that the model supports tool calling.`);
    }
    toolCalls.push({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments || '{}' } });
  }
  return { content, toolCalls, finishReason };
}

function notACompletion(url: string, error: z.ZodError, what = 'JSON'): ModelError {
  const issue = error.issues[0];
  return new ModelError(
    'bad-reply',
    `the model service at ${url} answered ${what} that is not a chat completion (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}). Check that model.baseURL points at an OpenAI-compatible API.`,
  );
}

function failure(error: unknown, url: string, signal: AbortSignal, timeout: AbortSignal, ms: number): ModelError {
  if (signal.aborted) return new ModelError('aborted', `the request to the model service at ${url} was stopped (the turn or task ended or timed out).`);
  if (timeout.aborted) return new ModelError('timeout', `the model service at ${url} did not answer within ${ms} ms (model.requestTimeoutMs).`);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (error as Error).message;
  return new ModelError('unreachable', `the model service at ${url} could not be reached (${detail}). Check model.baseURL and that the service is running.`);
}

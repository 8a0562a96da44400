/** A tool call the model asked for; `arguments` is the JSON text the model wrote. */
export interface ModelToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** One message of a model conversation, in the chat-completions shape. */
export type ModelMessage =
  | { readonly role: 'system' | 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly tool_calls?: readonly ModelToolCall[] }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

/** A tool offered to the model. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of its parameters. */
  readonly parameters: Record<string, unknown>;
}

/** What the model answered, streamed or not. */
export interface ModelReply {
  readonly content: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly finishReason: string | null;
}

/** One request to the model. */
export interface ModelRequest {
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ModelTool[];
  /** The caller's signal: a stopped turn or task ends the request at once. */
  readonly signal: AbortSignal;
  /** When given, the reply is streamed and each piece of its text is handed here as it arrives. */
  readonly onDelta?: (text: string) => void;
}

/** A model the agents can use. {@link createChatCompletionsClient} is the one implementation. */
export interface ModelProvider {
  complete(request: ModelRequest): Promise<ModelReply>;
}

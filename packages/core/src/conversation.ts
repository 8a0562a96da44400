import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Who wrote a message. */
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool'] as const;

/** One message of a conversation's history. */
export const ChatMessageSchema = z.object({
  role: z.enum(MESSAGE_ROLES),
  content: z.string(),
  /** The identity that sent a user message, where known. */
  from: z.object({ platform: z.string(), userId: z.string() }).optional(),
  /** A user message whose speaker no adapter authenticated (then there is no `from`): its author is never an owner. */
  unauthenticated: z.literal(true).optional(),
  /** For a tool message: the call it answers. */
  toolCallId: z.string().optional(),
  /** For an assistant message: the tool calls the model asked for (their arguments as the JSON text it wrote). */
  toolCalls: z.array(z.object({ id: z.string().min(1), name: z.string().min(1), arguments: z.string() })).optional(),
});
/** One message of a conversation's history. */
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/** What the model is shown for a conversation: the messages it keeps and notes (summaries, pinned facts). */
export const ModelContextSchema = z.object({
  messages: z.array(ChatMessageSchema),
  notes: z.array(z.string()),
});
/** What the model is shown for a conversation. */
export type ModelContext = z.infer<typeof ModelContextSchema>;

/**
 * A conversation as data the kernel owns. Side tasks (the pod) get no handle to write it; the
 * fingerprint lets a test prove they never touched it.
 */
export interface Conversation {
  readonly id: string;
  /** The root conversation of a child session. */
  readonly rootId?: string;
  /** The person who started it (`platform:userId`, as `personScopeOf` writes it), when it was opened for one. */
  readonly scope?: string;
  readonly history: readonly ChatMessage[];
  readonly context: ModelContext;
  /**
   * How many of the model context's oldest messages this process has archived (core's sessions
   * bound), as of this snapshot: a place in `context.messages` noted in one snapshot is that place
   * less what was archived between the two in a later one.
   */
  readonly contextArchived?: number;
}

/** A stable digest of a conversation's history and model context. */
export function fingerprintOf(conversation: Pick<Conversation, 'history' | 'context'>): string {
  return createHash('sha256').update(JSON.stringify([conversation.history, conversation.context])).digest('hex');
}

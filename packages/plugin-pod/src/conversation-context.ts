import type { ChatMessage, Conversation } from '@aalis/core';

/** What the agent is shown of the main conversation: its finished turns, newest kept within a budget. */
export interface ReadContext {
  readonly text: string;
  readonly messages: number;
}

/**
 * The finished turns of a conversation's model context: everything up to and including the last assistant
 * message (a user message still waiting for its answer is not a finished turn). Tool chatter is
 * left out; the newest turns are kept when the budget is short.
 */
export function finishedTurns(conversation: Pick<Conversation, 'context'>, maxChars: number): ReadContext {
  // The main conversation's model context: what its model is shown (the kernel keeps it with the history).
  const history = conversation.context.messages;
  let end = history.length;
  while (end > 0 && history[end - 1]!.role !== 'assistant') end--;
  const lines: string[] = [];
  let used = 0;
  let count = 0;
  for (let i = end - 1; i >= 0; i--) {
    const m: ChatMessage = history[i]!;
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const line = `${m.role}: ${m.content}`;
    if (used + line.length > maxChars) break;
    lines.unshift(line);
    used += line.length + 1;
    count++;
  }
  return { text: lines.join('\n'), messages: count };
}

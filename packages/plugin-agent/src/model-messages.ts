import type { ChatMessage } from '@aalis/core';
import type { ModelMessage } from '@aalis/model';

/**
 * A conversation's history as the model reads it. The agent's own notes (`system` messages in
 * the history, e.g. a failed turn's error) are for people and are left out; an assistant's tool
 * call without its result (a turn cut off mid-call) is dropped with it, and a tool result without
 * its call too, because the chat-completions protocol refuses either. A person's message kept
 * while a turn's calls ran (between a call and its result) is read after the results: the
 * protocol wants each call's results right after it (found by an attack: an owner's line sent
 * while a command ran broke every later turn of the conversation).
 */
export function modelMessagesOf(history: readonly ChatMessage[]): ModelMessage[] {
  const answered = new Set(history.flatMap((m) => (m.role === 'tool' && m.toolCallId !== undefined ? [m.toolCallId] : [])));
  const called = new Set<string>();
  const out: ModelMessage[] = [];
  // calls whose results are still to come, and the people's messages held until they have
  const pending = new Set<string>();
  let held: ModelMessage[] = [];
  const release = () => {
    out.push(...held);
    held = [];
  };
  for (const m of history) {
    if (m.role === 'user') (pending.size > 0 ? held : out).push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') {
      pending.clear();
      release();
      const calls = (m.toolCalls ?? []).filter((c) => answered.has(c.id));
      for (const c of calls) {
        called.add(c.id);
        pending.add(c.id);
      }
      if (calls.length === 0 && m.content === '') continue;
      out.push(
        calls.length > 0
          ? { role: 'assistant', content: m.content === '' ? null : m.content, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
          : { role: 'assistant', content: m.content },
      );
    } else if (m.role === 'tool' && m.toolCallId !== undefined && called.has(m.toolCallId)) {
      out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
      pending.delete(m.toolCallId);
      if (pending.size === 0) release();
    }
  }
  release();
  return out;
}

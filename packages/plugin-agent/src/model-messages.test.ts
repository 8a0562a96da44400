// The history as the model reads it: the chat-completions protocol wants each tool call's results
// right after it, so what sits between them is read after them.
import type { ChatMessage } from '@aalis/core';
import { describe, expect, it } from 'vitest';
import { modelMessagesOf } from './model-messages.js';

const call = (id: string): ChatMessage => ({ role: 'assistant', content: '', toolCalls: [{ id, name: 'run_command', arguments: '{}' }] });
const result = (id: string): ChatMessage => ({ role: 'tool', toolCallId: id, content: 'ok' });
const said = (content: string): ChatMessage => ({ role: 'user', content });

describe('modelMessagesOf', () => {
  it.each<[string, ChatMessage[], string[]]>([
    ['in order', [said('a'), call('1'), result('1'), { role: 'assistant', content: 'done' }], ['user:a', 'assistant:1', 'tool:1', 'assistant']],
    // found by an attack: an owner's line kept while a command ran sat between the call and its result
    ['a message kept while a call ran is read after its result', [said('a'), call('1'), said('kept'), result('1'), { role: 'assistant', content: 'done' }], ['user:a', 'assistant:1', 'tool:1', 'user:kept', 'assistant']],
    ['after the last of several results', [said('a'), { role: 'assistant', content: '', toolCalls: [{ id: '1', name: 'x', arguments: '{}' }, { id: '2', name: 'x', arguments: '{}' }] }, result('1'), said('kept'), result('2')], ['user:a', 'assistant:1,2', 'tool:1', 'tool:2', 'user:kept']],
    ['a call cut off mid-turn is dropped, the message stays', [said('a'), call('1'), said('kept')], ['user:a', 'user:kept']],
    ['a turn cut off after a kept message: the message is still read', [said('a'), call('1'), said('kept'), result('1')], ['user:a', 'assistant:1', 'tool:1', 'user:kept']],
  ])('%s', (_name, history, roles) => {
    const shown = modelMessagesOf(history).map((m) => (m.role === 'assistant' && 'tool_calls' in m && m.tool_calls ? `assistant:${m.tool_calls.map((c) => c.id).join(',')}` : m.role === 'tool' ? `tool:${m.tool_call_id}` : m.role === 'user' ? `user:${m.content}` : m.role));
    expect(shown).toEqual(roles);
  });
});

import { describe, expect, it } from 'vitest';
import { finishedTurns } from './conversation-context.js';

describe("what the pod reads of the main conversation", () => {
  it("is its model context (what its model is shown), not the whole record: a note kept for people only is not read", () => {
    const conversation = {
      history: [
        { role: 'user' as const, content: 'sales please' },
        { role: 'system' as const, content: 'the model could not answer: HTTP 500' },
        { role: 'assistant' as const, content: 'north sold 10' },
        { role: 'user' as const, content: 'waiting for its answer' },
      ],
      context: {
        messages: [
          { role: 'user' as const, content: 'sales please' },
          { role: 'assistant' as const, content: 'north sold 10' },
          { role: 'user' as const, content: 'waiting for its answer' },
        ],
        notes: [],
      },
    };
    expect(finishedTurns(conversation, 10_000)).toEqual({ text: 'user: sales please\nassistant: north sold 10', messages: 2 });
    // A compacted context (a summary instead of the old turns) is what is read.
    expect(finishedTurns({ context: { messages: [{ role: 'assistant', content: 'summary: north 10' }], notes: [] } }, 10_000).text).toBe('assistant: summary: north 10');
  });
});

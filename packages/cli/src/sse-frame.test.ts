import { describe, expect, it } from 'vitest';
import { sseFrameOf } from './sse-frame.js';

describe('sseFrameOf', () => {
  // F7: `/^data: (.*)$/m` stopped at a raw U+2028, and the cut JSON ended the stream.
  it('keeps U+2028 and U+2029 inside a data line, and splits lines on \\n only', () => {
    const payload = JSON.stringify({ text: 'a\u2028b\u2029c' });
    expect(payload).toContain('\u2028');
    const frame = sseFrameOf(`event: message/delta\nid: 3\ndata: ${payload}`);
    expect(frame).toEqual({ name: 'message/delta', data: payload });
    expect(JSON.parse(frame.data ?? '')).toEqual({ text: 'a\u2028b\u2029c' });
  });

  it('joins several data lines, and reads a comment as nothing', () => {
    expect(sseFrameOf('event: x\ndata: 1\ndata: 2')).toEqual({ name: 'x', data: '1\n2' });
    expect(sseFrameOf(': keepalive')).toEqual({});
  });
});

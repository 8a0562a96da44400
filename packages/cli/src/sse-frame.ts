/** One Server-Sent-Events frame (the text between two blank lines) as its event name and data. */
export interface SseFrame {
  readonly name?: string;
  readonly data?: string;
}

/**
 * Reads one SSE frame. Its lines are split on `\n` only: a JS regex's `^`, `$` and `.` also break
 * at U+2028 and U+2029, which JSON text may hold raw, so a frame read that way is cut inside its
 * data. Several `data:` lines join with `\n`, as the SSE format says.
 */
export function sseFrameOf(frame: string): SseFrame {
  let name: string | undefined;
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith('event: ')) name = line.slice('event: '.length);
    else if (line.startsWith('data: ')) data.push(line.slice('data: '.length));
  }
  return { ...(name !== undefined ? { name } : {}), ...(data.length > 0 ? { data: data.join('\n') } : {}) };
}

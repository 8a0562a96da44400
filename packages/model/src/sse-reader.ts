/**
 * Reads a Server-Sent-Events body and yields the `data:` field of each event (multi-line data
 * joined with '\n'). Comments and other fields are skipped; a partial last event is yielded only
 * when the stream ends after it.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // Events end at a blank line; CRLF and CR line ends are normalised first.
      buffer = buffer.replace(/\r\n?/g, '\n');
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const data = dataOf(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (data !== undefined) yield data;
        end = buffer.indexOf('\n\n');
      }
      if (done) {
        const data = dataOf(buffer);
        if (data !== undefined) yield data;
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function dataOf(event: string): string | undefined {
  const lines = event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''));
  return lines.length === 0 ? undefined : lines.join('\n');
}

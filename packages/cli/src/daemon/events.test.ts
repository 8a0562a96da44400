// The event stream as a client reads it: a real EventHub on the kernel's bus, served over HTTP,
// read by the tests' `subscribe` client (which splits SSE lines with a JS regex, as clients did).
import { createServer, type Server } from 'node:http';
import { createKernel, type Kernel } from '@aalis/core';
import { afterEach, describe, expect, it } from 'vitest';
import { EventHub } from './events.js';
import { subscribe } from './serve-process.testing.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function served(): Promise<{ url: string; kernel: Kernel }> {
  const kernel = createKernel({ dataDir: '/nonexistent-h88' });
  const hub = new EventHub(kernel.events);
  const server: Server = createServer((_req, res) => hub.add(res, undefined));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  closers.push(async () => {
    hub.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, kernel };
}

describe('the event stream', () => {
  // F7: a raw U+2028 in a `data:` line cut the frame's JSON for a regex client, and its stream ended for good.
  it('carries U+2028 and U+2029 intact to a client, escaped on the wire, and the stream goes on', async () => {
    const { url, kernel } = await served();
    const raw = await fetch(`${url}/api/events`);
    const stream = await subscribe(url, 'unused');
    const text = 'one\u2028two\u2029three';
    const emit = (delta: string) => kernel.events.emit('message/delta' as never, { session: 's', turnId: 't', text: delta } as never);
    emit(text);
    emit('after');
    expect(await stream.next('message/delta', (d) => d.text === text, 5000)).toMatchObject({ text });
    expect(await stream.next('message/delta', (d) => d.text === 'after', 5000)).toMatchObject({ text: 'after' });
    stream.close();
    const reader = (raw.body as ReadableStream<Uint8Array>).getReader();
    let wire = '';
    while (!wire.includes('after')) wire += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(wire).not.toMatch(/[\u2028\u2029]/);
    expect(wire).toContain('one\\u2028two\\u2029three');
  });
});

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

async function served(): Promise<{ url: string; kernel: Kernel; hub: EventHub }> {
  const kernel = createKernel({ dataDir: '/nonexistent-h88' });
  const hub = new EventHub(kernel.events);
  const server: Server = createServer((_req, res) => hub.add(res, undefined));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  closers.push(async () => {
    hub.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, kernel, hub };
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

// Found by an attack (h105): a client that connected and never read kept every event in the
// daemon's memory. A real socket that never reads; events until its stream is cut off.
describe('a client that never reads', () => {
  it('is cut off once more than the bound waits unsent; one that reads is kept', { timeout: 60_000 }, async () => {
    const { url, kernel, hub } = await served();
    const { connect } = await import('node:net');
    const { STREAM_BUFFER_MAX_BYTES } = await import('./events.js');
    const stalled = connect(Number(new URL(url).port), '127.0.0.1');
    stalled.on('error', () => {});
    await new Promise<void>((r) => stalled.on('connect', () => r()));
    stalled.write('GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    while (hub.size < 1) await new Promise((r) => setTimeout(r, 20));
    stalled.pause(); // never reads again
    const reading = await subscribe(url, 'unused');
    expect(hub.size).toBe(2);
    const piece = 'x'.repeat(64 * 1024);
    let sent = 0;
    // a paused socket never hears its close: the daemon's side says it was cut off
    for (let i = 0; i < 1000 && hub.size === 2; i++) {
      kernel.events.emit('message/delta' as never, { session: 's', turnId: 't', text: piece } as never);
      sent += piece.length;
      await new Promise((r) => setImmediate(r));
    }
    expect(hub.size, `not cut off after ${sent} bytes`).toBe(1);
    expect(sent).toBeGreaterThan(STREAM_BUFFER_MAX_BYTES);
    // the reading client still gets what comes next
    kernel.events.emit('message/delta' as never, { session: 's', turnId: 't', text: 'still here' } as never);
    expect(await reading.next('message/delta', (d) => d.text === 'still here', 10_000)).toMatchObject({ text: 'still here' });
    reading.close();
    stalled.destroy();
  });
});

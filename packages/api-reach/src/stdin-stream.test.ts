import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { feedStdin } from './feed-stdin.js';
import { parseRunRequest, SandboxRequestError } from './parse-run-request.js';
import { PROJECT, reachInput } from '../test/fixture.js';
import { resolveReach } from './reach.js';
import { sandboxPolicyOf } from './sandbox-policy-of.js';
import { StdinStream } from './stdin-stream.js';

async function take(stream: AsyncIterable<Uint8Array>): Promise<number[]> {
  const bytes: number[] = [];
  for await (const chunk of stream) bytes.push(...chunk);
  return bytes;
}

describe('StdinStream', () => {
  it('hands over what was written, bytes as they are, and ends at end()', async () => {
    const stream = new StdinStream();
    expect(stream.write(new Uint8Array([0xff, 0x00, 0xfe]))).toEqual({ ok: true, pending: 3 });
    expect(stream.write('é\n')).toEqual({ ok: true, pending: 6 });
    const taken = take(stream);
    expect(stream.end()).toMatchObject({ ok: true });
    expect(await taken).toEqual([0xff, 0x00, 0xfe, 0xc3, 0xa9, 0x0a]);
    expect(stream.write('more')).toMatchObject({ ok: false, reason: 'ended' });
  });

  it('refuses a write that would hold more than its bound, keeping nothing of it', () => {
    const stream = new StdinStream({ maxPendingBytes: 8 });
    expect(stream.write('12345')).toEqual({ ok: true, pending: 5 });
    const full = stream.write('6789');
    expect(full).toMatchObject({ ok: false, reason: 'full' });
    expect(full.ok ? '' : full.message).toMatch(/has not read 5 bytes .* bound of 8 bytes/);
    expect(stream.pending).toBe(5);
  });

  it('is closed once its reader stops: queued bytes dropped, writes refused', async () => {
    const stream = new StdinStream();
    const closed: string[] = [];
    stream.onClose(() => closed.push('closed'));
    stream.write('queued');
    const reader = stream[Symbol.asyncIterator]();
    const waiting = (async () => {
      await reader.next();
      return reader.next();
    })();
    await reader.return?.();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(stream.state).toBe('closed');
    expect(stream.pending).toBe(0);
    expect(stream.write('x')).toMatchObject({ ok: false, reason: 'closed' });
    expect(closed).toEqual(['closed']);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/one run only/);
  });

  it('is a valid run request stdin; anything else that is not text or bytes is refused by name', () => {
    const policy = sandboxPolicyOf(resolveReach(reachInput('owner', 'workspace', 'ask', { place: { home: PROJECT } })));
    const base = { argv: ['cat'], cwd: PROJECT, env: {}, timeoutMs: 1000, policy };
    const stdin = new StdinStream();
    expect(parseRunRequest('linux', { ...base, stdin }).stdin).toBe(stdin);
    const bad = () => parseRunRequest('linux', { ...base, stdin: { write() {} } });
    expect(bad).toThrow(SandboxRequestError);
    expect(bad).toThrow(/stdin/);
  });
});

describe('feedStdin', () => {
  it('feeds a real pipe as it is written, EOF at the end', async () => {
    const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
    const stream = new StdinStream();
    const feed = feedStdin(stream, cat.stdin);
    let out = '';
    cat.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    stream.write('one\n');
    while (!out.includes('one')) await once(cat.stdout, 'data');
    expect(out).toBe('one\n'); // seen before the second line was written
    stream.write('two\n');
    stream.end();
    await once(cat, 'close');
    await feed.done;
    expect(out).toBe('one\ntwo\n');
  });

  it('pulls no more than the sink takes: what is not read stays in the stream, bounded', async () => {
    // a sink that never drains: like a command that never reads
    const sink = new Writable({ highWaterMark: 4, write: (_chunk, _enc, _cb) => {} });
    const stream = new StdinStream({ maxPendingBytes: 10 });
    const feed = feedStdin(stream, sink);
    stream.write('abcdef'); // taken by the feed, held by the sink
    await new Promise((r) => setImmediate(r));
    expect(stream.write('0123456789')).toMatchObject({ ok: true, pending: 10 });
    expect(stream.write('x')).toMatchObject({ ok: false, reason: 'full' });
    feed.stop();
    await feed.done;
    expect(stream.state).toBe('closed');
  });
});

// The OpenAI-compatible client against real local HTTP servers: the scripted chat-completions
// stand-in (the model cannot run here), streaming included, and small servers that misbehave on purpose.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKernel } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createChatCompletionsClient } from './chat-completions.js';
import { ModelError } from './model-error.js';
import { model, modelPlugin } from './model-plugin.js';
import { startScriptedModel } from './scripted-model.js';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

type Respond = (status: number, text: string, type?: string) => void;

async function serve(handler: (body: string, respond: Respond) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => handler(body, (status, text, type = 'application/json') => res.writeHead(status, { 'content-type': type }).end(text)));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const signal = () => new AbortController().signal;
const tool = { name: 'run_python', description: 'run', parameters: { type: 'object', properties: { code: { type: 'string' } } } };

describe('the chat-completions client', () => {
  it('sends model, messages, tools and the key; reads tool calls and text', async () => {
    const fake = await startScriptedModel([{ match: 'go', steps: [{ call: 'run_python', args: { code: 'print(1)' } }, { say: 'all done' }] }]);
    try {
      const client = createChatCompletionsClient({ baseURL: `${fake.baseURL}/`, model: 'm1', apiKey: 'k', requestTimeoutMs: 5000 });
      const first = await client.complete({ messages: [{ role: 'user', content: 'go' }], tools: [tool], signal: signal() });
      expect(first).toMatchObject({ content: '', finishReason: 'tool_calls', toolCalls: [{ type: 'function', function: { name: 'run_python', arguments: '{"code":"print(1)"}' } }] });
      const second = await client.complete({
        messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: first.toolCalls }, { role: 'tool', tool_call_id: first.toolCalls[0]!.id, content: '{}' }],
        tools: [tool],
        signal: signal(),
      });
      expect(second).toEqual({ content: 'all done', toolCalls: [], finishReason: 'stop' });
      expect(fake.requests[0]).toMatchObject({ authorization: 'Bearer k', body: { model: 'm1', tools: [{ type: 'function', function: { name: 'run_python' } }] } });
      expect(fake.requests[0]?.body.stream).toBeUndefined();
    } finally {
      await fake.close();
    }
  });

  it('streams: asks for stream, hands each text piece over as it comes, and assembles tool calls split across chunks', async () => {
    const fake = await startScriptedModel([{ match: 'go', steps: [{ calls: [{ call: 'run_python', args: { code: 'print(1)' } }, { call: 'read', args: { path: '/x' } }] }, { say: 'all done now' }] }]);
    try {
      const client = createChatCompletionsClient({ baseURL: fake.baseURL, model: 'm1', requestTimeoutMs: 5000 });
      const pieces: string[] = [];
      const first = await client.complete({ messages: [{ role: 'user', content: 'go' }], tools: [tool], signal: signal(), onDelta: (t) => pieces.push(t) });
      expect(first.toolCalls.map((c) => [c.function.name, c.function.arguments])).toEqual([
        ['run_python', '{"code":"print(1)"}'],
        ['read', '{"path":"/x"}'],
      ]);
      expect(first.finishReason).toBe('tool_calls');
      const second = await client.complete({
        messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: first.toolCalls }],
        tools: [tool],
        signal: signal(),
        onDelta: (t) => pieces.push(t),
      });
      expect(second).toEqual({ content: 'all done now', toolCalls: [], finishReason: 'stop' });
      expect(pieces.length).toBe(3);
      expect(pieces.join('')).toBe('all done now');
      expect(fake.requests.every((r) => r.body.stream === true)).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it('gives a service that ignores stream: true its text in one piece', async () => {
    const url = await serve((_b, r) => r(200, JSON.stringify({ choices: [{ message: { content: 'whole' }, finish_reason: 'stop' }] })));
    const pieces: string[] = [];
    const reply = await createChatCompletionsClient({ baseURL: url, model: 'm', requestTimeoutMs: 2000 }).complete({ messages: [], tools: [], signal: signal(), onDelta: (t) => pieces.push(t) });
    expect([reply.content, pieces]).toEqual(['whole', ['whole']]);
  });

  const sse = 'text/event-stream';
  const cases: [string, (body: string, respond: Respond) => void, ModelError['reason'], RegExp, boolean?][] = [
    ['a refused key', (_b, r) => r(401, '{"error":"bad key"}'), 'http', /HTTP 401.*Check the API key/],
    ['a wrong route', (_b, r) => r(404, 'nope'), 'http', /HTTP 404.*Check model.baseURL/],
    ['not JSON', (_b, r) => r(200, '<html>'), 'bad-reply', /not JSON/],
    ['JSON of another shape', (_b, r) => r(200, '{"choices":[]}'), 'bad-reply', /not a chat completion/],
    ['no answer in time', () => {}, 'timeout', /did not answer within 300 ms/],
    ['a streamed chunk that is not JSON', (_b, r) => r(200, 'data: {oops\n\n', sse), 'bad-reply', /streamed a chunk that is not JSON/, true],
    ['a streamed chunk of another shape', (_b, r) => r(200, 'data: {"choices":{"a":1}}\n\n', sse), 'bad-reply', /a streamed chunk that is not a chat completion/, true],
    ['a stream cut before it finished', (_b, r) => r(200, 'data: {"choices":[{"delta":{"content":"hal"}}]}\n\n', sse), 'bad-reply', /ended its stream before the reply was complete/, true],
    [
      'a streamed tool call without a name',
      (_b, r) => r(200, 'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n', sse),
      'bad-reply',
      /tool call #0 without an id or a name/,
      true,
    ],
  ];
  for (const [name, handler, reason, message, stream] of cases) {
    it(`says clearly what went wrong: ${name}`, async () => {
      const client = createChatCompletionsClient({ baseURL: await serve(handler), model: 'm', requestTimeoutMs: 300 });
      const error = await client.complete({ messages: [{ role: 'user', content: 'x' }], tools: [], signal: signal(), ...(stream ? { onDelta: () => {} } : {}) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ reason, message: expect.stringMatching(message) });
    });
  }

  it('says so when nothing listens, and when the caller stopped the request', async () => {
    const client = createChatCompletionsClient({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', requestTimeoutMs: 2000 });
    expect(await client.complete({ messages: [], tools: [], signal: signal() }).catch((e: unknown) => e)).toMatchObject({ reason: 'unreachable', message: expect.stringContaining('could not be reached') });
    const stopped = new AbortController();
    const slow = createChatCompletionsClient({ baseURL: await serve(() => {}), model: 'm', requestTimeoutMs: 5000 });
    setTimeout(() => stopped.abort('timeout'), 100);
    expect(await slow.complete({ messages: [], tools: [], signal: stopped.signal }).catch((e: unknown) => e)).toMatchObject({ reason: 'aborted' });
  });
});

describe('the model plugin', () => {
  it('provides the configured client as the model service', async () => {
    const fake = await startScriptedModel([{ match: 'hi', steps: [{ say: 'hello' }] }]);
    const kernel = createKernel().use(modelPlugin, { baseURL: fake.baseURL, model: 'm', apiKeyEnv: 'H5_TEST_KEY_UNSET' });
    try {
      await kernel.start();
      expect(await kernel.get(model).complete({ messages: [{ role: 'user', content: 'hi' }], tools: [], signal: signal() })).toMatchObject({ content: 'hello' });
    } finally {
      await kernel.stop();
      await fake.close();
    }
  });

  it('without an endpoint, provides a model that answers every request with a not-configured error and its fix', async () => {
    const kernel = createKernel().use(modelPlugin);
    await kernel.start();
    const error = await kernel.get(model).complete({ messages: [], tools: [], signal: signal() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'not-configured', message: expect.stringContaining('no model is configured'), fix: expect.stringContaining('"baseURL"') });
    await kernel.stop();
  });

  it('refuses a config with an unknown key or a bad URL, by name', async () => {
    const kernel = createKernel().use(modelPlugin, { baseURL: 'not a url', modle: 'x' } as never);
    const [status] = await kernel.start();
    expect(status).toMatchObject({ state: 'failed', cause: expect.stringMatching(/baseURL[\s\S]*modle|modle[\s\S]*baseURL/) });
  });
});

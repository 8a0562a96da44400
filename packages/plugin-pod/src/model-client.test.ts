// The OpenAI-compatible client against real local HTTP servers: the scripted chat-completions
// stand-in (the model cannot run here) and small servers that misbehave on purpose.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeModel } from './fake-model.testing.js';
import { createChatCompletionsClient, ModelError } from './model-client.js';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: (body: string, respond: (status: number, text: string) => void) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => handler(body, (status, text) => res.writeHead(status, { 'content-type': 'application/json' }).end(text)));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const signal = () => new AbortController().signal;
const tool = { name: 'run_python', description: 'run', parameters: { type: 'object', properties: { code: { type: 'string' } } } };

describe('the chat-completions client', () => {
  it('sends model, messages, tools and the key; reads tool calls and text', async () => {
    const fake = await startFakeModel([{ match: 'go', steps: [{ call: 'run_python', args: { code: 'print(1)' } }, { say: 'all done' }] }]);
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
    } finally {
      await fake.close();
    }
  });

  const cases: [string, (body: string, respond: (s: number, t: string) => void) => void, ModelError['reason'], RegExp][] = [
    ['a refused key', (_b, r) => r(401, '{"error":"bad key"}'), 'http', /HTTP 401.*Check the API key/],
    ['a wrong route', (_b, r) => r(404, 'nope'), 'http', /HTTP 404.*Check model.baseURL/],
    ['not JSON', (_b, r) => r(200, '<html>'), 'bad-reply', /not JSON/],
    ['JSON of another shape', (_b, r) => r(200, '{"choices":[]}'), 'bad-reply', /not a chat completion/],
    ['no answer in time', () => {}, 'timeout', /did not answer within 300 ms/],
  ];
  for (const [name, handler, reason, message] of cases) {
    it(`says clearly what went wrong: ${name}`, async () => {
      const client = createChatCompletionsClient({ baseURL: await serve(handler), model: 'm', requestTimeoutMs: 300 });
      const error = await client.complete({ messages: [{ role: 'user', content: 'x' }], tools: [], signal: signal() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ reason, message: expect.stringMatching(message) });
    });
  }

  it('says so when nothing listens, and when the task stopped the request', async () => {
    const client = createChatCompletionsClient({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', requestTimeoutMs: 2000 });
    expect(await client.complete({ messages: [], tools: [], signal: signal() }).catch((e: unknown) => e)).toMatchObject({ reason: 'unreachable', message: expect.stringContaining('could not be reached') });
    const stopped = new AbortController();
    const slow = createChatCompletionsClient({ baseURL: await serve(() => {}), model: 'm', requestTimeoutMs: 5000 });
    setTimeout(() => stopped.abort('timeout'), 100);
    expect(await slow.complete({ messages: [], tools: [], signal: stopped.signal }).catch((e: unknown) => e)).toMatchObject({ reason: 'aborted' });
  });
});

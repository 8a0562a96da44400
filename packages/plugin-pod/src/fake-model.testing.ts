// The model's stand-in for tests: the model is the one part that cannot run here. This is a
// real HTTP server speaking the chat-completions protocol, replaying scripted tool calls; the
// pod's client, agent loop, tools, sandbox and files are all real.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted reply. */
export type Step =
  | { readonly call: string; readonly args: Record<string, unknown> }
  | { readonly calls: readonly { readonly call: string; readonly args: Record<string, unknown> }[] }
  | { readonly say: string }
  | { readonly hang: true }
  | { readonly status: number; readonly body: string };

/** A script: used for the task whose description contains `match`; step n answers the n-th model request. */
export interface Script {
  readonly match: string;
  readonly steps: readonly Step[];
}

/** What a request to the fake looked like. */
export interface SeenRequest {
  readonly body: { model: string; messages: { role: string; content: string | null }[]; tools?: { function: { name: string } }[] };
  readonly authorization: string | undefined;
}

/** A running fake model. */
export interface FakeModel {
  readonly baseURL: string;
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the fake on a free loopback port. */
export async function startFakeModel(scripts: readonly Script[]): Promise<FakeModel> {
  const requests: SeenRequest[] = [];
  let n = 0;
  const server: Server = createServer(async (req, res) => {
    const text = await bodyOf(req);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end('{"error":"no such route"}');
      return;
    }
    const body = JSON.parse(text) as SeenRequest['body'];
    requests.push({ body, authorization: req.headers.authorization });
    const task = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const script = scripts.find((s) => task.includes(s.match));
    const index = body.messages.filter((m) => m.role === 'assistant').length;
    const step: Step = script?.steps[index] ?? { say: script ? 'done' : `no script for: ${task}` };
    if ('hang' in step) return; // never answers: the client's timeout or the task's must end it
    if ('status' in step) {
      res.writeHead(step.status, { 'content-type': 'application/json' }).end(step.body);
      return;
    }
    const calls = 'say' in step ? [] : 'calls' in step ? step.calls : [step];
    const message =
      calls.length === 0
        ? { role: 'assistant', content: (step as { say: string }).say }
        : { role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: `call_${++n}`, type: 'function', function: { name: c.call, arguments: JSON.stringify(c.args) } })) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `cmpl-${n}`, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

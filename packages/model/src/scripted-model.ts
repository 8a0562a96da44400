import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted reply of {@link startScriptedModel}. */
export type ScriptStep =
  /** A tool call; `args` as a string is sent as the arguments' text as it is (a model's malformed or hostile JSON). */
  | { readonly call: string; readonly args: Record<string, unknown> | string }
  | { readonly calls: readonly { readonly call: string; readonly args: Record<string, unknown> | string }[] }
  | { readonly say: string }
  | { readonly hang: true }
  | { readonly status: number; readonly body: string }
  /** A stream that stops without finishing (the connection is cut mid-reply). */
  | { readonly cut: string };

/** A script: used when the newest user message contains `match`; step n answers the n-th request since that message. */
export interface Script {
  readonly match: string;
  readonly steps: readonly ScriptStep[];
}

/** What a request looked like. */
export interface SeenRequest {
  readonly body: { model: string; stream?: boolean; messages: { role: string; content: string | null; tool_call_id?: string }[]; tools?: { function: { name: string } }[] };
  readonly authorization: string | undefined;
}

/** A running scripted model. */
export interface ScriptedModel {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  readonly requests: SeenRequest[];
  /** Resolves once a request whose newest user message contains `match` arrived; rejects after `timeoutMs`. */
  untilAsked(match: string, timeoutMs?: number): Promise<void>;
  /**
   * Resolves once the client hung up on a request answered by a `hang` step whose newest user
   * message contains `match` (the caller aborted it); rejects after `timeoutMs`.
   */
  untilHungUp(match: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A stand-in for a model, for tests (the model is the one part that cannot run on a test
 * machine): a real HTTP server on the loopback speaking the chat-completions protocol, replaying
 * scripted text and tool calls, as SSE chunks when the request asks for `stream: true`.
 */
export async function startScriptedModel(scripts: readonly Script[]): Promise<ScriptedModel> {
  const requests: SeenRequest[] = [];
  const asked: string[] = [];
  const hungUp: string[] = [];
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of waiters) wake();
  };
  const until = (list: readonly string[], what: string, match: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!list.some((task) => task.includes(match))) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no request about '${match}' was ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  let n = 0;
  const server: Server = createServer(async (req, res) => {
    const text = await bodyOf(req);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end('{"error":"no such route"}');
      return;
    }
    const body = JSON.parse(text) as SeenRequest['body'];
    requests.push({ body, authorization: req.headers.authorization });
    const lastUser = body.messages.map((m) => m.role).lastIndexOf('user');
    const task = body.messages[lastUser]?.content ?? '';
    const script = scripts.find((s) => task.includes(s.match));
    const index = body.messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
    const step: ScriptStep = script?.steps[index] ?? { say: script ? 'done' : `no script for: ${task}` };
    if (!('hang' in step)) {
      asked.push(task);
      wakeAll();
    }
    if ('hang' in step) {
      // Never answers: the client's timeout or the caller's signal must end it, which is noted.
      res.on('close', () => {
        hungUp.push(task);
        wakeAll();
      });
      asked.push(task);
      wakeAll();
      return;
    }
    if ('status' in step) {
      res.writeHead(step.status, { 'content-type': 'application/json' }).end(step.body);
      return;
    }
    if ('cut' in step) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: step.cut } }] })}\n\n`);
      res.end();
      return;
    }
    const calls = 'say' in step ? [] : 'calls' in step ? step.calls : [step];
    const toolCalls = calls.map((c) => ({ id: `call_${++n}`, type: 'function', function: { name: c.call, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) } }));
    const content = 'say' in step ? step.say : null;
    const finish = calls.length ? 'tool_calls' : 'stop';
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (delta: unknown, finishReason: string | null = null) => res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
      // Text in three pieces and every call's arguments in two, as real services split them.
      for (const piece of thirds(content ?? '')) send({ content: piece });
      toolCalls.forEach((c, i) => {
        const half = Math.ceil(c.function.arguments.length / 2);
        send({ tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments.slice(0, half) } }] });
        send({ tool_calls: [{ index: i, function: { arguments: c.function.arguments.slice(half) } }] });
      });
      send({}, finish);
      res.end('data: [DONE]\n\n');
      return;
    }
    const message = calls.length === 0 ? { role: 'assistant', content } : { role: 'assistant', content: null, tool_calls: toolCalls };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `cmpl-${n}`, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    untilAsked: (match, timeoutMs = 30_000) => until(asked, 'asked', match, timeoutMs),
    untilHungUp: (match, timeoutMs = 30_000) => until(hungUp, 'hung up on', match, timeoutMs),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function thirds(text: string): string[] {
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

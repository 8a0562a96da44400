import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { readErrorEnvelope } from '@aalis/core';
import { askText } from './ask-text.js';
import { daemonAddressFrom, takeOptions } from './daemon-address.js';
import { daemonCall, daemonFetch } from './daemon-request.js';
import type { CliIo } from './io.js';
import { sseFrameOf } from './sse-frame.js';
import { forTerminal, forTerminalLine } from './terminal-text.js';

const HELP = `aalis chat: talk to the agent of a running daemon

Usage: aalis chat [--dir DEPLOYMENT_DIR | --data DIR | --url URL] [--session ID]

Each line you type is a message to the agent in conversation ID (default 'cli'), sent as the
console's identity (an owner). Its reply streams in, with every tool call and its outcome. When a
call asks, the ask is shown and your next line answers it:
  y            approve once
  r            approve and remember it for this conversation (when it may be remembered)
  n [reason]   reject, with the reason the agent reads
Commands:
  /mode plan|ask|execute   switch the run mode (refused while a turn runs)
  /tier readonly|confirm|workspace|full   switch the access tier
  /stop                    end the running turn and its commands
  /help, /quit
The daemon's address and token come from <data>/daemon/url and <data>/daemon/token, or --url and
$AALIS_TOKEN.
`;

type Json = Record<string, unknown> & { [key: string]: unknown };
interface Ask {
  readonly id: string;
  readonly code: string;
  readonly rememberable: boolean;
}

function short(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** One chat session against the daemon's API and its event stream. */
class ChatSession {
  readonly #asks: Ask[] = [];
  /** Messages typed while a turn ran: the daemon takes one turn at a time, so they are sent after it. */
  readonly #queued: string[] = [];
  /** Turns whose end arrived, possibly before the answer that named them. */
  readonly #ended = new Set<string>();
  /** A queued message being sent. */
  #sending: Promise<unknown> | undefined;
  readonly #stream = new AbortController();
  #turn: { id: string; done: Promise<void>; end: () => void } | undefined;
  #midLine = false;

  constructor(
    private url: string,
    private token: string,
    private readonly session: string,
    private readonly io: CliIo,
    /** Reads the daemon's address and token again (from its data directory), for a reconnect. */
    private readonly reread?: () => { url: string; token: string },
  ) {}

  async api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const answer = await daemonCall(this.url, this.token, method, path, body);
    if (answer.body === undefined && answer.text !== '') throw new Error(`the daemon at ${this.url} answered ${answer.status} with something that is not JSON.`);
    return { status: answer.status, body: (answer.body ?? {}) as Json };
  }

  /**
   * Opens the event stream of the conversation; resolves once it is live. When it drops later
   * (the daemon restarted, a proxy cut it), it is opened again until the session closes, and
   * stderr says so: a chat that silently stopped showing the agent's replies and asks would
   * leave the person typing answers to nothing.
   */
  async listen(): Promise<void> {
    const first = await this.#open();
    let ready: () => void = () => {};
    const isReady = new Promise<void>((resolve) => {
      ready = resolve;
    });
    void this.#follow(first, ready);
    await isReady;
  }

  async #open(): Promise<Response> {
    const res = await daemonFetch(this.url, this.token, `/api/events?session=${encodeURIComponent(this.session)}`, { signal: this.#stream.signal });
    if (res.status === 401) throw new Error("the daemon refused the token: give the one in <data>/daemon/token of its data directory ($AALIS_TOKEN), or --dir/--data of its deployment.");
    if (!res.ok || !res.body) throw new Error(`the daemon's event stream answered ${res.status}.`);
    return res;
  }

  /** Reads the stream until it ends; then, unless the session is closing, opens it again (backing off while it cannot). */
  async #follow(first: Response, ready: () => void): Promise<void> {
    const { signal } = this.#stream;
    let res: Response | undefined = first;
    let dropped = false;
    for (let delay = 500; !signal.aborted; delay = Math.min(delay * 2, 5000)) {
      if (res) {
        let live = false;
        await this.#read(res, () => {
          live = true;
          if (dropped) this.io.stderr('aalis chat: the event stream is back.\n');
          dropped = false;
          ready();
        });
        if (signal.aborted) return;
        if (live) delay = 500;
        // What happened while it was down is not replayed: a turn waited on may have ended then.
        this.#turn?.end();
        if (!dropped) this.io.stderr("aalis chat: the daemon's event stream dropped; reconnecting (replies and asks meanwhile are not shown).\n");
        dropped = true;
      }
      try {
        await sleep(delay, undefined, { signal });
        // a restarted daemon has a new token (and may have a new address): read them again
        if (this.reread) ({ url: this.url, token: this.token } = this.reread());
        res = await this.#open();
      } catch {
        res = undefined; // aborted (the loop ends), or the daemon is not back yet
      }
    }
  }

  /** Reads one connection's frames; a frame that is not JSON is skipped, never the end of the stream. */
  async #read(res: Response, onReady: () => void): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const { name, data } = sseFrameOf(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (name === 'ready') onReady();
          else if (name) {
            let payload: Json;
            try {
              payload = data ? (JSON.parse(data) as Json) : {};
            } catch {
              continue;
            }
            this.#onEvent(name, payload);
          }
        }
      }
    } catch {
      // closed, or cut off
    }
  }

  /** Prints a line made of the daemon's data: every control character in it shown as its escape (terminal-text.ts). */
  #say(text: string): void {
    if (this.#midLine) this.io.stdout('\n');
    this.#midLine = false;
    this.io.stdout(forTerminal(text));
  }

  #onEvent(name: string, e: Json): void {
    if (name === 'message/delta') {
      this.io.stdout(forTerminal(String(e.text)));
      this.#midLine = true;
    } else if (name === 'message/created') {
      const message = e.message as { role: string; content: string };
      if (message.role === 'system') this.#say(`! ${message.content}\n`);
    } else if (name === 'tool/started') this.#say(`  > ${forTerminalLine(String(e.tool))} ${forTerminalLine(short(e.params))}\n`);
    else if (name === 'tool/ended') {
      const outcome = e.outcome as { ok: boolean; value?: unknown; kind?: string; message?: string };
      this.#say(outcome.ok ? `  ok ${String(e.tool)}: ${short(outcome.value)}\n` : `  refused ${String(e.tool)} (${outcome.kind}): ${outcome.message}\n`);
    } else if (name === 'approval/requested') {
      this.#asks.push({ id: String(e.id), code: String(e.code), rememberable: e.rememberable === true });
      const subject = e.subject as { rule: string };
      this.#say(`? ${forTerminalLine(String(e.summary))}\n${askText(e.subject)}  rule: ${forTerminalLine(String(subject.rule))} · code ${forTerminalLine(String(e.code))}\n  answer: y (approve once)${e.rememberable ? ', r (remember for this conversation)' : ''}, n [reason] (reject)\n`);
    } else if (name === 'approval/resolved') {
      const at = this.#asks.findIndex((a) => a.id === e.id);
      if (at >= 0) this.#asks.splice(at, 1);
      const outcome = e.outcome as { outcome: string };
      this.#say(`  (ask ${String(e.code ?? '')} ${outcome.outcome} via ${String(e.via)})\n`);
    } else if (name === 'turn/ended') {
      const error = e.error as { message: string; fix?: string } | undefined;
      this.#say(e.state === 'failed' ? `! the turn failed: ${error?.message ?? ''}${error?.fix ? ` Fix: ${error.fix}.` : ''}\n` : e.state === 'stopped' ? '(stopped)\n' : '(answered)\n');
      this.#ended.add(String(e.turnId));
      const turn = this.#turn;
      if (turn && turn.id === e.turnId) {
        this.#turn = undefined;
        turn.end();
        const next = this.#queued.shift();
        if (next !== undefined) {
          const sending = this.#send(next).catch((error: unknown) => this.#say(`! ${(error as Error).message}\n`));
          this.#sending = sending.finally(() => {
            if (this.#sending === sending) this.#sending = undefined;
          });
        }
      }
    }
  }

  /** Handles one typed line; `false` ends the session. */
  async line(raw: string): Promise<boolean> {
    const line = raw.trim();
    if (line === '') return true;
    const ask = this.#asks[0];
    if (ask && !line.startsWith('/')) return this.#answer(ask, line);
    const [command, ...rest] = line.split(/\s+/);
    switch (command) {
      case '/quit':
      case '/exit':
        return false;
      case '/help':
        this.io.stdout(HELP);
        return true;
      case '/stop': {
        const r = await this.api('POST', `/api/sessions/${encodeURIComponent(this.session)}/stop`);
        this.#say(r.status === 200 ? (r.body.stopped ? 'stopping the turn…\n' : 'nothing is running.\n') : `! ${this.#error(r)}\n`);
        return true;
      }
      case '/mode':
      case '/tier': {
        const key = command === '/mode' ? 'runMode' : 'tier';
        const r = await this.api('POST', `/api/sessions/${encodeURIComponent(this.session)}/settings`, { [key]: rest.join(' ') });
        const settings = r.body.settings as Record<string, string> | undefined;
        this.#say(r.status === 200 && settings ? `run mode ${settings.runMode}, tier ${settings.tier}, boundary ${settings.boundary}, approver ${settings.approver}\n` : `! refused: ${this.#error(r)}\n`);
        return true;
      }
      default:
        if (line.startsWith('/')) {
          this.#say(`! unknown command ${command}; /help lists them.\n`);
          return true;
        }
        return this.#send(line);
    }
  }

  async #answer(ask: Ask, line: string): Promise<boolean> {
    const [word = '', ...reason] = line.split(/\s+/);
    const decision = /^y(es)?$/i.test(word) ? 'approve' : /^r(emember)?$/i.test(word) && ask.rememberable ? 'approve-remember' : /^n(o)?$/i.test(word) ? 'reject' : undefined;
    if (!decision) {
      this.#say(`! answer the ask first: y, ${ask.rememberable ? 'r, ' : ''}or n [reason] (or /stop).\n`);
      return true;
    }
    const r = await this.api('POST', '/api/approvals/reply', { code: ask.code, decision, ...(decision === 'reject' && reason.length > 0 ? { reason: reason.join(' ') } : {}) });
    if (r.status !== 200) this.#say(`! ${this.#error(r)}\n`);
    return true;
  }

  async #send(message: string): Promise<boolean> {
    if (this.#turn) {
      this.#queued.push(message);
      this.#say('(the agent is still answering: this message is sent when it is done; /stop ends the turn)\n');
      return true;
    }
    const status = await this.api('GET', '/api/status');
    const me = (status.body.console as { as: { platform: string; userId: string } } | undefined)?.as;
    if (!me) throw new Error(`the daemon's status did not say whom the console answers as (HTTP ${status.status}).`);
    const turn = { session: { id: this.session }, platform: me.platform, speaker: me, authorised: me, inbound: { id: `cli-${randomUUID()}` }, category: 'own' };
    // Registered before the request: the turn's end may arrive before its answer.
    let end: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      end = resolve;
    });
    const r = await this.api('POST', '/api/turns', { turn, message });
    if (r.status !== 200) {
      this.#say(`! not sent: ${this.#error(r)}\n`);
      return true;
    }
    if (typeof r.body.turnId === 'string' && !this.#ended.has(r.body.turnId)) this.#turn = { id: r.body.turnId, done, end };
    return true;
  }

  #error(r: { status: number; body: Json }): string {
    const error = readErrorEnvelope(r.body);
    return error ? `${error.message} (${error.code})${error.fix ? ` Fix: ${error.fix}.` : ''}` : `HTTP ${r.status}`;
  }

  /** Closes the stream; at the end of the input, after the running turn has ended (piped input gets its answer). */
  async close(waitForTurn: boolean): Promise<void> {
    while (waitForTurn && (this.#turn || this.#sending)) await (this.#turn?.done ?? this.#sending);
    this.#stream.abort();
  }
}

/** `aalis chat`: a REPL against the running daemon's agent. */
export async function chatCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const args = [...argv];
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(HELP);
    return 0;
  }
  let address: { url: string; token: string };
  let session: string;
  let where: ReturnType<typeof takeOptions<'dir' | 'data' | 'url'>>;
  try {
    where = takeOptions(args, ['dir', 'data', 'url']);
    address = daemonAddressFrom(where);
    session = takeOptions(args, ['session']).session ?? 'cli';
    if (args.length > 0) throw new Error(`unknown argument '${args[0]}'; the options are --dir, --data, --url and --session.`);
  } catch (error) {
    const fix = (error as { fix?: unknown }).fix;
    io.stderr(`aalis chat: ${(error as Error).message}\n${typeof fix === 'string' ? `fix: ${fix}\n` : ''}`);
    return 2;
  }
  if (!io.lines) {
    io.stderr('aalis chat: it reads what you type from standard input, and there is none here.\n');
    return 2;
  }
  const chat = new ChatSession(address.url, address.token, session, io, () => daemonAddressFrom(where));
  let quit = false;
  try {
    await chat.listen();
    io.stdout(`chatting in '${session}' with the agent at ${address.url}; /help for commands, /quit to leave.\n`);
    for await (const line of io.lines()) {
      if (!(await chat.line(line))) {
        quit = true;
        break;
      }
    }
  } catch (error) {
    io.stderr(`aalis chat: ${(error as Error).message}\n`);
    await chat.close(false);
    return 1;
  }
  // /quit leaves a running turn to the daemon; the end of piped input waits for its answer.
  await chat.close(!quit);
  return 0;
}

import type { ServerResponse } from 'node:http';
import type { EventBus } from '@aalis/core';
import { AGENT_EVENTS } from '@aalis/plugin-agent';
import type { ApprovalRequestedEvent, ApprovalResolvedEvent } from '@aalis/plugin-approval';

/** The kernel events the API streams to adapters, in this order of interest. */
export const STREAMED_EVENTS = ['approval/requested', 'approval/resolved', 'session/settings-changed', ...AGENT_EVENTS] as const;
/** One of {@link STREAMED_EVENTS}. */
export type StreamedEvent = (typeof STREAMED_EVENTS)[number];

interface Client {
  readonly res: ServerResponse;
  /** Only events of this (root) session, when set. */
  readonly session: string | undefined;
  /** Only events of the (root) sessions this admits, when set (an adapter's: its platform's conversations), judged as each event comes. */
  readonly admits: ((session: string) => boolean) | undefined;
}

const KEEPALIVE_MS = 15_000;

/**
 * The most of a stream's events waiting unsent (bytes) before its client is cut off: one that
 * connects and never reads kept every event in the daemon's memory for as long as it stayed (found
 * by an attack, h105). A client that reads keeps nothing waiting; one cut off connects again.
 */
export const STREAM_BUFFER_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A payload as one SSE `data:` line. JSON.stringify leaves U+2028 and U+2029 raw, and a client
 * that splits lines with a JS regex (`^`/`$` under /m, `.`) reads them as line breaks: the frame's
 * JSON is cut there, fails to parse, and the client's stream ends for good. JSON allows the
 * `\u2028` escape, which is the same string once parsed.
 */
export function sseData(payload: unknown): string {
  return JSON.stringify(payload).replace(/[\u2028\u2029]/g, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

function sessionOf(name: StreamedEvent, payload: unknown): string {
  if (name === 'session/settings-changed') return (payload as { sessionId: string }).sessionId;
  // The agent's events name their root conversation as a string.
  if (typeof (payload as { session?: unknown }).session === 'string') return (payload as { session: string }).session;
  const { session } = payload as ApprovalRequestedEvent | ApprovalResolvedEvent;
  return session.rootId ?? session.id;
}

/** Streams kernel events to Server-Sent-Events clients. */
export class EventHub {
  readonly #clients = new Set<Client>();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #keepalive: NodeJS.Timeout;
  #seq = 0;

  constructor(bus: EventBus) {
    for (const name of STREAMED_EVENTS) {
      const handler = (payload: unknown) => this.#broadcast(name, payload);
      this.#unsubscribe.push(bus.on(name, handler as never));
    }
    this.#keepalive = setInterval(() => {
      for (const client of this.#clients) this.#send(client, ': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.#keepalive.unref();
  }

  /** Adds a client: the response becomes an event stream, starting with a `ready` event; `admits` keeps it to some conversations. */
  add(res: ServerResponse, session: string | undefined, admits?: (session: string) => boolean): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    const client: Client = { res, session, admits };
    this.#clients.add(client);
    res.on('close', () => this.#clients.delete(client));
    res.write(`event: ready\ndata: ${sseData({ events: STREAMED_EVENTS, ...(session ? { session } : {}) })}\n\n`);
  }

  /** How many clients are listening. */
  get size(): number {
    return this.#clients.size;
  }

  /** Ends every stream (after a last `stopping` event) and stops listening to the kernel. */
  close(): void {
    clearInterval(this.#keepalive);
    for (const off of this.#unsubscribe) off();
    for (const client of this.#clients) {
      client.res.write('event: stopping\ndata: {}\n\n');
      client.res.end();
    }
    this.#clients.clear();
  }

  #broadcast(name: StreamedEvent, payload: unknown): void {
    const session = sessionOf(name, payload);
    const frame = `event: ${name}\nid: ${++this.#seq}\ndata: ${sseData(payload)}\n\n`;
    for (const client of this.#clients) {
      if ((client.session === undefined || client.session === session) && (client.admits === undefined || client.admits(session))) this.#send(client, frame);
    }
  }

  /** Writes to one client's stream; one with more than {@link STREAM_BUFFER_MAX_BYTES} waiting unsent is cut off instead. */
  #send(client: Client, text: string): void {
    if (client.res.writableLength > STREAM_BUFFER_MAX_BYTES) {
      this.#clients.delete(client);
      client.res.destroy();
      return;
    }
    client.res.write(text);
  }
}

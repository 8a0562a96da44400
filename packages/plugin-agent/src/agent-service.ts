import { randomUUID } from 'node:crypto';
import { defineService, type OriginTurn } from '@aalis/core';
import { AgentError } from './agent-error.js';
import type { TurnEndedEvent } from './events.js';
import { runTurn, type TurnDeps } from './turn-runner.js';

/** A turn in flight. */
export interface RunningTurn {
  readonly turnId: string;
  /** The conversation it runs in and its root. */
  readonly conversation: string;
  readonly session: string;
  readonly startedAt: number;
}

interface Entry {
  readonly view: RunningTurn;
  readonly controller: AbortController;
  readonly done: Promise<TurnEndedEvent>;
}

/**
 * The main conversation's agent. One turn at a time per conversation: a message that arrives
 * while a turn runs is **refused** (`turn-running`, nothing appended), never queued behind it,
 * so an adapter always knows whether its message was taken. `stop` aborts the turn: its model
 * request, its pending asks and its running commands end with it.
 */
export class AgentService {
  readonly #running = new Map<string, Entry>();
  #closed = false;

  constructor(private readonly deps: TurnDeps) {}

  /**
   * Takes a person's message: appends it to the conversation's history and starts a turn.
   * Resolves once the turn has started (its events follow on the bus); `done` resolves when it ends.
   */
  async submit(turn: OriginTurn, message: string): Promise<{ turnId: string; done: Promise<TurnEndedEvent> }> {
    if (this.#closed) throw new AgentError('turn-running', 'the agent is stopping; the message was not taken.', 'send it again after the daemon restarts');
    if (message.trim() === '') throw new AgentError('no-message', 'the message is empty; there is nothing to answer.');
    const conversation = turn.session.id;
    const busy = this.runningIn(conversation);
    if (busy) {
      throw new AgentError(
        'turn-running',
        `a turn (${busy.turnId}) is still running in conversation '${conversation}'; the message was refused, not queued, and not added to the history.`,
        `wait for its turn/ended event, or stop it (POST /api/sessions/${encodeURIComponent(conversation)}/stop), then send the message again`,
      );
    }
    const controller = new AbortController();
    const turnId = randomUUID();
    const view: RunningTurn = { turnId, conversation, session: turn.session.rootId ?? conversation, startedAt: Date.now() };
    // Marked running before the first await, so a second message at the same moment is refused.
    let settle: (event: TurnEndedEvent) => void = () => {};
    const done = new Promise<TurnEndedEvent>((resolve) => {
      settle = resolve;
    });
    this.#running.set(conversation, { view, controller, done });
    try {
      const kept = { role: 'user' as const, content: message, ...(turn.authorised ? { from: turn.authorised } : { unauthenticated: true as const }) };
      await this.deps.sessions.append(conversation, kept);
      this.deps.events.emit('message/created', { session: view.session, conversation, turnId, message: kept });
    } catch (error) {
      this.#running.delete(conversation);
      throw error;
    }
    void runTurn(this.deps, { turn, turnId, signal: controller.signal }).then((event) => {
      this.#running.delete(conversation);
      settle(event);
    });
    return { turnId, done };
  }

  /** The turn running in a conversation, or in any conversation of a root. */
  runningIn(id: string): RunningTurn | undefined {
    const own = this.#running.get(id);
    if (own) return own.view;
    return [...this.#running.values()].find((e) => e.view.session === id)?.view;
  }

  /** Ends the turn running in a conversation (or under a root): its model request, asks and commands. */
  async stop(id: string, reason = 'stopped by a person'): Promise<RunningTurn | undefined> {
    const entries = [...this.#running.values()].filter((e) => e.view.conversation === id || e.view.session === id);
    for (const e of entries) e.controller.abort(new Error(reason));
    await Promise.all(entries.map((e) => e.done));
    return entries[0]?.view;
  }

  /** Stops every turn and takes no more (the plugin's disposal). */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#running.values()];
    for (const e of all) e.controller.abort(new Error('the daemon is stopping'));
    await Promise.all(all.map((e) => e.done));
  }
}

/** The agent service descriptor. */
export const agent = defineService<AgentService>('agent');

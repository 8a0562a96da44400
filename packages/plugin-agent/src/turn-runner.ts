import type { ChatMessage, OriginTurn, PluginContext, Sessions, ToolDispatcher, ToolOutcome } from '@aalis/core';
import { describeError, jsonNestsDeeperThan, MAX_JSON_DEPTH, turnWithAuthors } from '@aalis/core';
import { ModelError, type ModelMessage, type ModelProvider, type ModelTool } from '@aalis/model';
import { withinCall } from '@aalis/plugin-approval';
import { z } from 'zod';
import type { AgentConfig } from './agent-config.js';
import type { AgentEventBase, TurnEndedEvent } from './events.js';
import { modelMessagesOf } from './model-messages.js';
import { SUBMIT_PLAN } from './plan-rule.js';
import { systemPromptOf } from './prompts.js';

/** What one turn uses. */
export interface TurnDeps {
  readonly sessions: Sessions;
  readonly dispatcher: ToolDispatcher;
  readonly model: ModelProvider;
  /** Where the turn's events go (the kernel's bus). */
  readonly events: Pick<PluginContext, 'emit'>;
  readonly config: AgentConfig;
  /** The turn's principal (core's authority); a turn for someone who is not the owner is shown no earlier turn's tool results. */
  readonly principalOf?: (turn: OriginTurn) => 'owner' | 'other';
}

/** One turn to run: the inbound turn, its id, and the signal `stop` aborts. */
export interface TurnRun {
  readonly turn: OriginTurn;
  readonly turnId: string;
  readonly signal: AbortSignal;
}

/** The registered tools as the model is offered them: each with its parameters' JSON Schema; `submit_plan` only in plan mode. */
export function modelToolsOf(dispatcher: ToolDispatcher, runMode: string): ModelTool[] {
  return dispatcher
    .list()
    .filter((t) => t.name !== SUBMIT_PLAN || runMode === 'plan')
    .map((t) => {
      const params = dispatcher.parametersOf(t.name);
      let parameters: Record<string, unknown> = { type: 'object' };
      try {
        if (params) parameters = z.toJSONSchema(params, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      } catch {
        // The dispatcher validates all the same; the model only loses the schema's detail.
      }
      return { name: t.name, description: t.description, parameters };
    });
}

/**
 * The tool-using loop of one turn: the model reads the conversation's history, its reply is
 * streamed as `message/delta` and kept as `message/created`, each tool call it asks for goes
 * through the dispatcher (validation, the high-risk gate, the call's own credential from the
 * turn) inside `withinCall`, so a stopped turn ends the call's asks and commands. Never throws:
 * every end is a `turn/ended` payload, and a failure is noted in the history for people to read.
 */
export async function runTurn(deps: TurnDeps, run: TurnRun): Promise<TurnEndedEvent> {
  const conversation = run.turn.session.id;
  const base: AgentEventBase = { session: run.turn.session.rootId ?? conversation, conversation, turnId: run.turnId };
  const append = async (message: ChatMessage, options: { historyOnly?: boolean } = {}) => {
    await deps.sessions.append(conversation, message, options);
    deps.events.emit('message/created', { ...base, message });
  };
  try {
    const settings = await deps.sessions.settings(conversation);
    deps.events.emit('turn/started', { ...base, runMode: settings.runMode });
    const tools = modelToolsOf(deps.dispatcher, settings.runMode);
    // A turn for someone who is not the owner (or acting on a non-owner's words) reads no tool result of the turns before it: those
    // are the owner's reads (a file's content, a command's output) that the owner's own answers
    // may have left unsaid (found by an attack: a stranger asked what the owner's notes said, and
    // the model was handed the owner's read of them). Its own calls' results it reads.
    // (The model context only grows but for an archive of its oldest messages, counted below, so the messages before this turn keep their places.)
    // Whoever's words the model reads counts (a stranger's earlier line can ask the owner's turn to
    // repeat what it read into a group the stranger reads).
    const atStart = await deps.sessions.get(conversation);
    const before = atStart.context.messages;
    const start = before.length;
    // a person's message kept while this turn runs can archive the oldest messages (core's
    // sessions): the places are then counted from what was archived at the turn's start, each
    // count taken with its snapshot's messages (read apart, a cut could fall between them)
    const cutAtStart = atStart.contextArchived ?? 0;
    const hideEarlier = (deps.principalOf?.(turnWithAuthors(run.turn, before)) ?? 'other') !== 'owner';
    for (let step = 0; step < deps.config.maxSteps; step++) {
      // Read afresh each step: a plan approved mid-turn changes the mode, and so the prompt and tools.
      const now = await deps.sessions.settings(conversation);
      // The model reads the conversation's model context (kernel-owned: the messages it keeps and the notes), not the whole record.
      const { context, contextArchived } = await deps.sessions.get(conversation);
      // A person's message kept while this turn runs (POST /api/turns without a reply) is the next
      // turn's to read: read now, it came with this turn's earlier reads in view, which were judged
      // for the words before it (found by an attack: a stranger's line sent mid-turn was shown the
      // owner's reads of the turns before), and it sat between a tool call and its result.
      const startNow = start - ((contextArchived ?? 0) - cutAtStart);
      const read = context.messages.filter((m, i) => (i < startNow ? !(hideEarlier && m.role === 'tool') : m.role !== 'user'));
      const messages: ModelMessage[] = [{ role: 'system', content: systemPromptOf(now.runMode, context.notes) }, ...modelMessagesOf(read)];
      // The calls of this step act for everyone whose words the model read in it, not only for the
      // turn's speaker: a non-owner's message in the conversation makes them `other` (no local effect).
      const acting = turnWithAuthors(run.turn, read);
      const offered = now.runMode === settings.runMode ? tools : modelToolsOf(deps.dispatcher, now.runMode);
      const reply = await deps.model.complete({ messages, tools: offered, signal: run.signal, onDelta: (text) => deps.events.emit('message/delta', { ...base, text }) });
      const calls = reply.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      await append({ role: 'assistant', content: reply.content, ...(calls.length > 0 ? { toolCalls: calls } : {}) });
      if (calls.length === 0) return end(deps, base, 'answered');
      for (const call of calls) {
        const outcome = run.signal.aborted ? stoppedOutcome : await callTool(deps, { ...run, turn: acting }, base, call);
        await append({ role: 'tool', toolCallId: call.id, content: cut(JSON.stringify(outcome), deps.config.toolResultMaxChars) });
      }
      if (run.signal.aborted) return end(deps, base, 'stopped');
    }
    return await fail(deps, base, append, 'max-steps', `the agent used its ${deps.config.maxSteps} model replies for this turn without finishing, so the turn was ended.`, 'ask again with a narrower request, or raise agent.maxSteps in the config');
  } catch (error) {
    if (run.signal.aborted || (error instanceof ModelError && error.reason === 'aborted')) return end(deps, base, 'stopped');
    if (error instanceof ModelError) return fail(deps, base, append, `model-${error.code}`, `the model could not answer: ${error.message}`, error.fix);
    return fail(deps, base, append, 'internal', `the agent failed: ${describeError(error)}`);
  }
}

const stoppedOutcome: ToolOutcome = { ok: false, kind: 'failed', message: 'the turn was stopped before this call ran; nothing ran.' };

async function callTool(deps: TurnDeps, run: TurnRun, base: AgentEventBase, call: { id: string; name: string; arguments: string }): Promise<ToolOutcome> {
  const callId = `${run.turnId}:${call.id}`;
  let params: unknown;
  let refused: string | undefined;
  try {
    params = JSON.parse(call.arguments === '' ? '{}' : call.arguments);
    // what reads the value after the parse recurses (the events' JSON for the console, the schemas)
    if (jsonNestsDeeperThan(params)) refused = `the arguments of ${call.name} nest arrays and objects deeper than ${MAX_JSON_DEPTH} levels; nothing ran. Write them as one flat JSON object.`;
  } catch {
    refused = `the arguments of ${call.name} are not JSON (${call.arguments.slice(0, 200)}); nothing ran. Write them as one JSON object.`;
  }
  if (refused !== undefined) {
    // the event carries the arguments' text, cut, never a value too deep to serialize
    deps.events.emit('tool/started', { ...base, callId, tool: call.name, params: cut(call.arguments, 2_000) });
    const outcome: ToolOutcome = { ok: false, kind: 'invalid-params', message: refused };
    deps.events.emit('tool/ended', { ...base, callId, tool: call.name, outcome });
    return outcome;
  }
  deps.events.emit('tool/started', { ...base, callId, tool: call.name, params });
  let outcome: ToolOutcome;
  try {
    outcome = await withinCall(run.signal, () => deps.dispatcher.dispatch({ tool: call.name, params, turn: run.turn, callId, signal: run.signal }));
  } catch (error) {
    outcome = { ok: false, kind: 'failed', message: `tool '${call.name}' failed: ${describeError(error)}` };
  }
  deps.events.emit('tool/ended', { ...base, callId, tool: call.name, outcome });
  return outcome;
}

function end(deps: TurnDeps, base: AgentEventBase, state: TurnEndedEvent['state'], error?: TurnEndedEvent['error']): TurnEndedEvent {
  const event: TurnEndedEvent = { ...base, state, ...(error ? { error } : {}) };
  deps.events.emit('turn/ended', event);
  return event;
}

async function fail(deps: TurnDeps, base: AgentEventBase, append: (m: ChatMessage, o: { historyOnly?: boolean }) => Promise<void>, code: string, message: string, fix?: string): Promise<TurnEndedEvent> {
  // Kept in the history for people (the model never reads the agent's system notes).
  await append({ role: 'system', content: fix ? `${message} Fix: ${fix}.` : message }, { historyOnly: true }).catch(() => {});
  return end(deps, base, 'failed', { code, message, ...(fix ? { fix } : {}) });
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (cut: ${text.length - max} more characters)`;
}

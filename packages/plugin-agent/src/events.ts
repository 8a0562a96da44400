import type { ChatMessage, ToolOutcome } from '@aalis/core';

/** How a turn ended. */
export const TURN_END_STATES = ['answered', 'stopped', 'failed'] as const;
/** One of {@link TURN_END_STATES}. */
export type TurnEndState = (typeof TURN_END_STATES)[number];

/** What every agent event carries: the root conversation (the SSE filter) and the turn. */
export interface AgentEventBase {
  /** The root conversation id. */
  readonly session: string;
  /** The conversation the turn runs in (the root or a child). */
  readonly conversation: string;
  readonly turnId: string;
}

/** `turn/started`: the agent took a message. */
export interface TurnStartedEvent extends AgentEventBase {
  readonly runMode: string;
}

/** `message/delta`: a piece of the reply's text as the model streams it. */
export interface MessageDeltaEvent extends AgentEventBase {
  readonly text: string;
}

/** `message/created`: a message was added to the conversation's history. */
export interface MessageCreatedEvent extends AgentEventBase {
  readonly message: ChatMessage;
}

/** `tool/started`: a tool call the model asked for is about to be dispatched. */
export interface ToolStartedEvent extends AgentEventBase {
  readonly callId: string;
  readonly tool: string;
  /** The parameters as the model wrote them (parsed JSON, or the raw text when it is not JSON). */
  readonly params: unknown;
}

/** `tool/ended`: the structured outcome of a tool call. */
export interface ToolEndedEvent extends AgentEventBase {
  readonly callId: string;
  readonly tool: string;
  readonly outcome: ToolOutcome;
}

/** `turn/ended`: the turn is over; `error` says why when it failed. */
export interface TurnEndedEvent extends AgentEventBase {
  readonly state: TurnEndState;
  readonly error?: { readonly code: string; readonly message: string; readonly fix?: string };
}

declare module '@aalis/core' {
  interface KernelEvents {
    'turn/started': (event: TurnStartedEvent) => void;
    'message/delta': (event: MessageDeltaEvent) => void;
    'message/created': (event: MessageCreatedEvent) => void;
    'tool/started': (event: ToolStartedEvent) => void;
    'tool/ended': (event: ToolEndedEvent) => void;
    'turn/ended': (event: TurnEndedEvent) => void;
  }
}

/** The agent's events, in the order a turn emits them. */
export const AGENT_EVENTS = ['turn/started', 'message/delta', 'message/created', 'tool/started', 'tool/ended', 'turn/ended'] as const;

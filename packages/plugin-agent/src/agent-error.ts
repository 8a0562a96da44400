import { AalisError } from '@aalis/core';

/** Why the agent refused or failed. */
export const AGENT_ERROR_CODES = ['turn-running', 'no-message', 'unknown-conversation', 'not-plan', 'plan-name'] as const;
/** One of {@link AGENT_ERROR_CODES}. */
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];

/** The agent's error: a stable `code`, a message that says what was refused, and what to do. */
export class AgentError extends AalisError<AgentErrorCode> {
  override readonly name = 'AgentError';
  constructor(code: AgentErrorCode, message: string, fix?: string) {
    super(code, message, { fix });
  }
}

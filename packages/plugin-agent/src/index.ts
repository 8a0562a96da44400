export { type AgentConfig, AgentConfigSchema } from './agent-config.js';
export { AGENT_ERROR_CODES, AgentError, type AgentErrorCode } from './agent-error.js';
export { agentPlugin } from './agent-plugin.js';
export { AgentService, agent, type RunningTurn } from './agent-service.js';
export {
  AGENT_EVENTS,
  type AgentEventBase,
  type MessageCreatedEvent,
  type MessageDeltaEvent,
  TURN_END_STATES,
  type ToolEndedEvent,
  type ToolStartedEvent,
  type TurnEndedEvent,
  type TurnEndState,
  type TurnStartedEvent,
} from './events.js';
export { modelMessagesOf } from './model-messages.js';
export { PLAN_NAME, planPathOf, SUBMIT_PLAN } from './plan-rule.js';
export { systemPromptOf } from './prompts.js';
export { submitPlanTool } from './submit-plan.js';
export { modelToolsOf, runTurn, type TurnDeps, type TurnRun } from './turn-runner.js';
export { modelReviewer, type ReviewerConfig, ReviewerConfigSchema, reviewerPlugin } from './model-reviewer.js';

import { approval, authority, definePlugin, type OriginTurn, sessions, tools } from '@aalis/core';
import { model } from '@aalis/model';
import { AgentConfigSchema } from './agent-config.js';
import { AgentService, agent } from './agent-service.js';
import { submitPlanTool } from './submit-plan.js';

/**
 * The main conversation's agent as a plugin: provides `agent`, registers `submit_plan`. It
 * needs the kernel's sessions, the tool dispatcher (whose extenders give each call its
 * credential, whose main directory is where `submit_plan` writes) and the `model` service;
 * approval is used when present (`submit_plan` refuses without it), and authority (without it no
 * turn is known to be the owner's, so none is shown an earlier turn's tool results).
 */
export const agentPlugin = definePlugin({
  name: 'agent',
  provides: [agent],
  inject: [sessions, tools, model],
  optional: [approval, authority],
  config: AgentConfigSchema,
  apply(ctx, config) {
    const dispatcher = ctx.get(tools);
    // without an authority nobody is known to be an owner: a turn is shown no earlier turn's tool results
    const principalOf = (turn: OriginTurn) => ctx.maybe(authority)?.principalOf(turn) ?? 'other';
    const service = new AgentService({ sessions: ctx.get(sessions), dispatcher, model: ctx.get(model), events: ctx, config, principalOf });
    ctx.onDispose(dispatcher.register(submitPlanTool({ sessions: ctx.get(sessions), approval: () => ctx.maybe(approval) })));
    ctx.provide(agent, service);
    ctx.onDispose(() => service.close());
  },
});

import { isReachCredential } from '@aalis/api-reach';
import { type ApprovalService, defineTool, type Sessions, ToolError, writeFileAtomic } from '@aalis/core';
import { z } from 'zod';
import { PLAN_NAME, planPathOf, SUBMIT_PLAN } from './plan-rule.js';

/** What `submit_plan` needs. */
export interface SubmitPlanDeps {
  readonly sessions: Sessions;
  readonly approval: () => ApprovalService | undefined;
}

const Params = z
  .object({
    name: z.string().regex(PLAN_NAME, "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit").refine((n) => !n.includes('..'), "no '..'"),
    plan: z.string().trim().min(1).max(100_000).describe('the plan, as Markdown'),
  })
  .strict();

/**
 * `submit_plan`: in plan mode, writes the plan document (the one write plan allows, at
 * {@link planPathOf}) and asks the owner with the plan's text. Approved: the conversation leaves
 * plan for `execute`, and the settings saved on entering plan come back (the kernel's resolver
 * does that). Rejected or expired: the conversation stays in plan and the reason is the tool's
 * result, for the model to revise the plan.
 */
export function submitPlanTool(deps: SubmitPlanDeps) {
  return defineTool({
    name: SUBMIT_PLAN,
    description: 'Plan mode only: save your plan as <workspace>/.aalis/plan/<name>.md and ask the owner to approve it. Approved: the conversation switches to execute and you carry the plan out. Rejected: the reason comes back; revise and submit again.',
    params: Params,
    risk: 'low',
    async handler(ctx, params) {
      // The plan is a file in the owner's workspace and an ask of the owner: a call that acts for
      // somebody else has no local effect (its credential runs nothing), so it writes nothing and
      // asks nothing (before, a non-owner's plan was written over the owner's, then put to them).
      // read as unknown: plugin-tools declares the field, and this package does not depend on it
      const credential: unknown = (ctx as { readonly credential?: unknown }).credential;
      if (!isReachCredential(credential) || credential.exec === 'none') {
        throw new ToolError('denied', 'submit_plan was refused (rule: no-local-effect): this call acts for someone who is not the owner, so it has no effect on this machine; nothing was written and nothing was asked. The owner can plan in a turn of their own.');
      }
      const root = ctx.turn.session.rootId ?? ctx.turn.session.id;
      const settings = await deps.sessions.settings(root);
      if (settings.runMode !== 'plan') {
        throw new ToolError('denied', `submit_plan is for plan mode, and this conversation is in '${settings.runMode}' mode; nothing was written. Carry on with the task directly.`);
      }
      const gate = deps.approval();
      if (!gate) throw new ToolError('unavailable', 'no approval service is running, so the plan cannot be put to the owner; nothing was written.');
      // The call's own main directory, as its credential was issued: the person's space in the
      // docker deployment (a binding of theirs in the conversation), never the session's shared
      // binding, where the plan would land in a place that person's calls cannot even read.
      const home = credential.home;
      if (home === undefined) throw new ToolError('unavailable', 'this call has no main directory (its credential names none), so the plan has nowhere to go; nothing was written.');
      const path = planPathOf(home, params.name);
      try {
        await writeFileAtomic(path, `${params.plan}\n`, { createParents: true });
      } catch (error) {
        throw new ToolError('failed', `the plan could not be written to ${path}: ${(error as Error).message}`);
      }
      const outcome = await gate.ask({
        turn: ctx.turn,
        subject: { kind: 'plan', summary: params.plan, rule: 'plan' },
        summary: `approve the plan '${params.name}' (${path}) and switch the conversation to execute`,
        rememberable: false,
      });
      if (outcome.outcome === 'expired') throw new ToolError('expired', `nobody answered the plan within ${outcome.afterMs} ms; the conversation stays in plan mode. The plan is saved at ${path}.`);
      if (outcome.outcome === 'rejected') {
        throw new ToolError('rejected', `the owner rejected the plan: ${outcome.reason}. The conversation stays in plan mode; revise the plan with this in mind and submit it again.`);
      }
      // Leaving plan restores the tier and boundary saved on entering it: the resolver's one rule.
      const resolution = await deps.sessions.change(root, { runMode: 'execute' });
      if (!resolution.ok) throw new ToolError('failed', `the plan was approved but the mode could not change: ${resolution.message}`);
      return { approved: true, path, runMode: resolution.settings.runMode, tier: resolution.settings.tier, boundary: resolution.settings.boundary };
    },
  });
}

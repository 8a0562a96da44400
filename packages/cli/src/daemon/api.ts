import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Identity,
  IdentitySchema,
  type Kernel,
  type OriginTurn,
  type Sessions,
  SettingsChangeSchema,
  type ToolDispatcher,
  authority,
  describeError,
  personScopeOf,
  sessions,
  settingsScopeOf,
  tools,
} from '@aalis/core';
import { AgentError, type AgentService, agent } from '@aalis/plugin-agent';
import { type ApprovalDeskService, type AuditLog, AuditPageError, approvalDesk, REPLY_DECISIONS, withinCall } from '@aalis/plugin-approval';
import { z } from 'zod';
import { CallTiming } from './call-timing.js';
import type { CallTracker } from './calls.js';
import { EventLoopAnswerSchema, type EventLoopWatch } from './event-loop.js';
import type { EventHub } from './events.js';
import { ApiError, bodyOf, sendJson } from './http.js';
import { specTools, type SpecToolsService } from '@aalis/plugin-spec-tools';
import { CallBody, ConsoleAddressAnswerSchema, jsonSchemaOf, MessagesAnswerSchema, ReloadAnswerSchema, SettingsViewSchema, SpecToolsAnswerSchema, StopAnswerSchema, ToolsAnswerSchema, TurnAnswerSchema, TurnBody } from './payloads.js';
import type { SessionIndex } from './session-index.js';

/**
 * In the docker deployment, refuses a settings change by anyone but the conversation's person (the
 * one who started its root conversation) or an admin. A conversation opened for nobody is an
 * admin's to change (fail closed).
 */
async function mustBeTheirs(ctx: ApiContext, persons: { readonly admins: readonly Identity[] }, id: string, who: Identity): Promise<void> {
  if (persons.admins.some((admin) => admin.platform === who.platform && admin.userId === who.userId)) return;
  const conversation = await sessionsOf(ctx).peek(id);
  const root = conversation?.rootId !== undefined && conversation.rootId !== id ? await sessionsOf(ctx).peek(conversation.rootId) : conversation;
  if (root?.scope !== undefined && root.scope === personScopeOf(who)) return;
  throw new ApiError('not-theirs', `in this deployment a conversation's settings are its person's: '${id}' is ${root?.scope ?? 'nobody'}'s, not ${personScopeOf(who)}'s, so nothing was changed.`, {
    fix: 'Ask that person to change it in their own conversation, or an admin (the console).',
  });
}

/** What the API handlers use. */
export interface ApiContext {
  readonly kernel: Kernel;
  readonly audit: AuditLog;
  readonly index: SessionIndex;
  readonly hub: EventHub;
  readonly calls: CallTracker;
  /** Whom the console answers as, when a reply names nobody. */
  readonly consoleIdentity: Identity;
  /**
   * Set in the docker deployment: a conversation's settings are changed only by its person (who
   * started it) or one of `admins`, as its asks are answered (plugin-approval's `persons`).
   */
  readonly persons?: { readonly admins: readonly Identity[] };
  /** Binds a conversation to where it works before its first call (the docker deployment's user space). */
  readonly place: (turn: OriginTurn) => Promise<void>;
  readonly status: () => unknown;
  /** How long the event loop is held, over a window a client starts. */
  readonly loop: EventLoopWatch;
  /** A capability that opens only the pod's API, for the pod's panel; throws when there is no pod. */
  readonly podCapability: () => { capability: string; expiresAt: number; address: string };
  /** The console's address with a new one-time code (console-codes.ts), for `aalis console`. */
  readonly consoleAddress: () => { address: string; expiresAt: number };
}

const ReplyBody = z
  .object({
    code: z.string().min(1).max(64),
    decision: z.enum(REPLY_DECISIONS, { error: () => `expected one of ${REPLY_DECISIONS.join(', ')}` }),
    by: IdentitySchema.optional(),
    reason: z.string().trim().max(2000).optional(),
  })
  .strict();
const RevokeBody = z.object({ id: z.string().min(1), by: IdentitySchema.optional() }).strict();
/** A settings change, and whom an adapter makes it for (`by`, as in a reply or a revocation). */
const SettingsBody = SettingsChangeSchema.extend({
  by: IdentitySchema.optional().describe("the identity the adapter authenticated for the person changing the settings; refused (403 not-owner) unless an owner's, and in the docker deployment (403 not-theirs) unless the conversation's person's or an admin's; without it, the console's"),
}).strict();


type Handler = (ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL, params: string[]) => Promise<void>;

interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: RegExp;
  readonly handler: Handler;
}

/** A byte offset given in the query, or `undefined` when absent. */
function offsetParam(url: URL, name: string, from: string): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new ApiError('bad-request', `${name} must be a byte offset from ${from} (got '${text}').`);
  return value;
}

function desk(ctx: ApiContext): ApprovalDeskService {
  return ctx.kernel.get(approvalDesk);
}

function sessionsOf(ctx: ApiContext): Sessions {
  return ctx.kernel.get(sessions);
}

function specToolsOf(ctx: ApiContext): SpecToolsService {
  const service = ctx.kernel.maybe(specTools);
  if (service === undefined) throw new ApiError('unavailable', 'the spec-tools plugin is not running in this daemon');
  return service;
}

function dispatcher(ctx: ApiContext): ToolDispatcher {
  return ctx.kernel.get(tools);
}

function agentOf(ctx: ApiContext): AgentService | undefined {
  return ctx.kernel.maybe(agent);
}

/** The agent's refusal as an API error: a running turn is a conflict, with what to do. */
function agentRefusal(error: unknown): unknown {
  if (!(error instanceof AgentError)) return error;
  return new ApiError(error.code, error.message, { fix: error.fix, cause: error });
}

/** Refuses a conversation the daemon has never seen: reading or changing its settings must not create it. */
async function known(ctx: ApiContext, id: string): Promise<void> {
  if (await sessionsOf(ctx).has(id)) return;
  throw new ApiError('not-found', `there is no conversation '${id}'; a conversation begins with its first turn (POST /api/turns) or tool call.`);
}

async function settingsView(ctx: ApiContext, id: string) {
  const all = desk(ctx);
  return SettingsViewSchema.parse({
    session: id,
    settings: await sessionsOf(ctx).settings(id),
    pending: all.pending(id).length,
    grants: all.grants.list(id).length,
  });
}

const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: /^\/api\/status$/,
    handler: async (ctx, _req, res) => sendJson(res, 200, ctx.status()),
  },
  {
    method: 'GET',
    path: /^\/api\/status\/event-loop$/,
    handler: async (ctx, _req, res) => sendJson(res, 200, EventLoopAnswerSchema.parse(ctx.loop.read())),
  },
  {
    method: 'POST',
    path: /^\/api\/status\/event-loop$/,
    // A new window: a bench starts one before its load and reads it after.
    handler: async (ctx, _req, res) => sendJson(res, 200, EventLoopAnswerSchema.parse(ctx.loop.start())),
  },
  {
    method: 'POST',
    path: /^\/api\/console\/pod-capability$/,
    // The console opens the pod's panel at `address`: a one-time code for the capability in its fragment, never the token.
    handler: async (ctx, _req, res) => sendJson(res, 200, ctx.podCapability()),
  },
  {
    method: 'POST',
    path: /^\/api\/console\/address$/,
    // `aalis console`: a new address that opens the console once; the token itself is never put in one
    handler: async (ctx, _req, res) => sendJson(res, 200, ConsoleAddressAnswerSchema.parse(ctx.consoleAddress())),
  },
  {
    method: 'GET',
    path: /^\/api\/tools$/,
    handler: async (ctx, _req, res) => {
      const all = dispatcher(ctx);
      const list = all.list().map((t) => {
        const params = all.parametersOf(t.name);
        return { ...t, parameters: params ? jsonSchemaOf(params) : {} };
      });
      sendJson(res, 200, ToolsAnswerSchema.parse({ tools: list }));
    },
  },
  {
    method: 'GET',
    path: /^\/api\/tools\/spec$/,
    handler: async (ctx, _req, res) => {
      const service = specToolsOf(ctx);
      sendJson(res, 200, SpecToolsAnswerSchema.parse({ dir: service.dir, engine: service.engine(), tools: service.list(), problems: service.problems(), audit: await service.audit() }));
    },
  },
  {
    method: 'POST',
    path: /^\/api\/tools\/reload$/,
    // Reads the tools directory again (after editing a spec by hand); the tool manager reloads by itself.
    handler: async (ctx, _req, res) => sendJson(res, 200, ReloadAnswerSchema.parse(await specToolsOf(ctx).reload())),
  },
  {
    method: 'POST',
    path: /^\/api\/turns$/,
    async handler(ctx, req, res) {
      const { turn, message, reply } = await bodyOf(req, TurnBody);
      const root = turn.session.rootId ?? turn.session.id;
      await ctx.place(turn);
      const service = sessionsOf(ctx);
      // A new conversation starts from the last used settings of the person who started it, never
      // from somebody else's: the same scope reach uses when it opens one for a call.
      const scope = settingsScopeOf(turn);
      await service.open(turn.session.id, { scope, ...(turn.session.rootId !== undefined ? { rootId: turn.session.rootId } : {}) });
      await ctx.index.seen(root, turn.platform);
      const runner = agentOf(ctx);
      let started: { turnId: string } | undefined;
      if (message !== undefined && reply && runner) {
        // The agent appends the message and answers it; a turn still running refuses it (409), and then nothing is appended.
        started = await runner.submit(turn, message).catch((error: unknown) => {
          throw agentRefusal(error);
        });
      } else if (message !== undefined) {
        await service.append(turn.session.id, { role: 'user', content: message, ...(turn.authorised ? { from: turn.authorised } : { unauthenticated: true as const }) });
      }
      sendJson(
        res,
        200,
        TurnAnswerSchema.parse({
          session: root,
          principal: ctx.kernel.get(authority).principalOf(turn),
          settings: await service.settings(turn.session.id, { scope }),
          ...(started ? { turnId: started.turnId } : {}),
        }),
      );
    },
  },
  {
    method: 'POST',
    path: /^\/api\/tools\/call$/,
    async handler(ctx, req, res) {
      const timing = new CallTiming();
      const body = await bodyOf(req, CallBody);
      const root = body.turn.session.rootId ?? body.turn.session.id;
      await ctx.place(body.turn);
      // Opened here in its starter's scope, as POST /api/turns does, before anything can create it unscoped.
      await sessionsOf(ctx).open(body.turn.session.id, { scope: settingsScopeOf(body.turn), ...(body.turn.session.rootId !== undefined ? { rootId: body.turn.session.rootId } : {}) });
      const noted = ctx.index.note(root, body.turn.platform);
      // A new conversation is on disk before anything runs in it (GET /api/grants and the console
      // enumerate the index); a failed write refuses the call with nothing run.
      if (noted.isNew) await timing.index(noted.written);
      // Inside `withinCall`, every ask the call makes ends when the caller hangs up (cancelled,
      // audited), so nothing is done for a call nobody waits for.
      const outcome = await ctx.calls.run(res, { session: root, tool: body.tool, params: body.params }, (signal, callId) =>
        timing.tool(() => withinCall(signal, () => dispatcher(ctx).dispatch({ tool: body.tool, params: body.params, turn: body.turn, callId, signal }))),
        body.callId,
      );
      // A known conversation's line (its last use) was written while the tool ran; the answer waits
      // for it, so an answered call's use is on disk. It cannot fail the call: the tool has run.
      if (!noted.isNew) {
        const failed = await timing.index(noted.settled);
        if (failed !== undefined) process.emitWarning(`the conversation index could not note the use of '${root}' (${describeError(failed)}); the console shows it, and it is on disk at the index's next compaction.`);
      }
      if (res.destroyed) return;
      res.setHeader('server-timing', timing.header());
      sendJson(res, 200, outcome);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/events$/,
    handler: async (ctx, _req, res, url) => ctx.hub.add(res, url.searchParams.get('session') ?? undefined),
  },
  {
    method: 'GET',
    path: /^\/api\/approvals\/pending$/,
    // Each ask comes with the calls running in its conversation: the one that raised it is among them.
    handler: async (ctx, _req, res, url) =>
      sendJson(res, 200, { pending: desk(ctx).pending(url.searchParams.get('session') ?? undefined).map((p) => ({ ...p, running: ctx.calls.runningIn(p.session) })) }),
  },
  {
    method: 'POST',
    path: /^\/api\/approvals\/reply$/,
    async handler(ctx, req, res) {
      const body = await bodyOf(req, ReplyBody);
      const result = await desk(ctx).reply({ ...body, by: body.by ?? ctx.consoleIdentity });
      if (result.ok) return sendJson(res, 200, result);
      throw new ApiError(result.refused, result.message);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/grants$/,
    handler: async (ctx, _req, res, url) => {
      const one = url.searchParams.get('session');
      const ids = one !== null ? [one] : ctx.index.list().map((s) => s.id);
      sendJson(res, 200, { grants: ids.flatMap((id) => desk(ctx).grants.list(id)) });
    },
  },
  {
    method: 'POST',
    path: /^\/api\/grants\/revoke$/,
    async handler(ctx, req, res) {
      const body = await bodyOf(req, RevokeBody);
      // `by` is the identity the adapter authenticated; the desk checks it is an owner.
      const result = await desk(ctx).grants.revoke(body.id, body.by ?? ctx.consoleIdentity);
      if (!result.ok) throw new ApiError(result.refused, result.message);
      sendJson(res, 200, result);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/sessions$/,
    async handler(ctx, _req, res) {
      const list = await Promise.all(ctx.index.list().map(async (s) => ({ ...s, ...(await settingsView(ctx, s.id)) })));
      sendJson(res, 200, { sessions: list, lastUsed: sessionsOf(ctx).lastUsedByScope() });
    },
  },
  {
    method: 'GET',
    path: /^\/api\/sessions\/([^/]+)\/settings$/,
    async handler(ctx, _req, res, _url, [id = '']) {
      await known(ctx, id);
      sendJson(res, 200, await settingsView(ctx, id));
    },
  },
  {
    method: 'POST',
    path: /^\/api\/sessions\/([^/]+)\/settings$/,
    async handler(ctx, req, res, _url, [id = '']) {
      const { by, ...change } = await bodyOf(req, SettingsBody);
      await known(ctx, id);
      // Settings are the owner's, as approvals and revocations are: an adapter says whom it acts for.
      if (by !== undefined && !ctx.kernel.get(authority).isOwner(by)) {
        throw new ApiError('not-owner', `only an owner may change a conversation's settings; ${by.platform}:${by.userId} is not an owner of this daemon, so nothing was changed in '${id}'.`, { fix: "Ask an owner (listed in the config's owners) to change it, or change it from the console." });
      }
      if (ctx.persons !== undefined) await mustBeTheirs(ctx, ctx.persons, id, by ?? ctx.consoleIdentity);
      // The run mode changes only between turns: a turn runs under the mode it began in.
      const running = change.runMode !== undefined ? agentOf(ctx)?.runningIn(id) : undefined;
      if (running) {
        throw new ApiError('turn-running', `the run mode cannot change while a turn (${running.turnId}) runs in conversation '${id}'; nothing was changed. Wait for its turn/ended event, or stop it (POST /api/sessions/${encodeURIComponent(id)}/stop), then switch.`);
      }
      // The kernel's resolver is the one place the cross-axis rules live; its refusal is passed on.
      // the last used settings of whoever asked for the change, not of whoever started the conversation
      const resolution = await sessionsOf(ctx).change(id, change, { by: personScopeOf(by ?? ctx.consoleIdentity) });
      if (!resolution.ok) throw new ApiError(resolution.rule, resolution.message);
      sendJson(res, 200, await settingsView(ctx, id));
    },
  },
  {
    method: 'GET',
    path: /^\/api\/sessions\/([^/]+)\/messages$/,
    async handler(ctx, _req, res, _url, [id = '']) {
      await known(ctx, id);
      const { history } = await sessionsOf(ctx).get(id);
      const running = agentOf(ctx)?.runningIn(id);
      sendJson(res, 200, MessagesAnswerSchema.parse({ session: id, messages: history, ...(running ? { running: { turnId: running.turnId, startedAt: running.startedAt } } : {}) }));
    },
  },
  {
    method: 'POST',
    path: /^\/api\/sessions\/([^/]+)\/stop$/,
    async handler(ctx, _req, res, _url, [id = '']) {
      await known(ctx, id);
      // Ends the turn: its model request, its asks (cancelled, audited) and its commands (killed).
      const stopped = await agentOf(ctx)?.stop(id, 'stopped through the API');
      sendJson(res, 200, StopAnswerSchema.parse({ session: id, stopped: stopped !== undefined, ...(stopped ? { turnId: stopped.turnId } : {}) }));
    },
  },
  {
    method: 'GET',
    path: /^\/api\/audit$/,
    async handler(ctx, _req, res, url) {
      const limit = Number(url.searchParams.get('limit') ?? 200);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new ApiError('bad-request', `limit must be a whole number from 1 to 10000 (got '${url.searchParams.get('limit')}').`);
      const before = offsetParam(url, 'before', "a previous page's 'next'");
      const after = offsetParam(url, 'after', "a previous page's 'end'");
      // Read from the end, a page at a time: the cost does not grow with the log.
      const page = await ctx.audit
        .page({ limit, session: url.searchParams.get('session') ?? undefined, segment: url.searchParams.get('segment') ?? undefined, before, after, file: url.searchParams.get('file') ?? undefined })
        .catch((error: unknown) => {
          throw error instanceof AuditPageError ? new ApiError('bad-request', error.message) : error;
        });
      sendJson(res, 200, page);
    },
  },
];

/** Answers one `/api/` request, or throws an {@link ApiError}. */
export async function handleApi(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  let pathMatched = false;
  for (const route of ROUTES) {
    const match = route.path.exec(url.pathname);
    if (!match) continue;
    pathMatched = true;
    if (route.method !== req.method) continue;
    let params: string[];
    try {
      params = match.slice(1).map((p) => decodeURIComponent(p));
    } catch {
      throw new ApiError('bad-request', `the path ${url.pathname} is not properly encoded.`);
    }
    return route.handler(ctx, req, res, url, params);
  }
  if (pathMatched) {
    const allowed = ROUTES.filter((r) => r.path.test(url.pathname)).map((r) => r.method);
    throw new ApiError('method-not-allowed', `${req.method} is not accepted on ${url.pathname}; use ${allowed.join(' or ')}.`);
  }
  throw new ApiError('not-found', `there is no API route ${url.pathname}; see packages/cli/DAEMON.md for the routes.`);
}

/** The approval routes' bodies, for DAEMON.md's generated tables. */
export { ReplyBody, RevokeBody, SettingsBody };

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
  escapeInvisible,
  idProblem,
  personScopeOf,
  sessions,
  settingsScopeOf,
  shownText,
  tools,
} from '@aalis/core';
import { AgentError, type AgentService, agent } from '@aalis/plugin-agent';
import { type ApprovalDeskService, type AuditLog, AuditPageError, approvalDesk, parseCode, REPLY_DECISIONS, withinCall } from '@aalis/plugin-approval';
import { z } from 'zod';
import { type ApiClient, actingIdentity, checkKnownConversationOf, checkTurnOf, seesConversation } from './api-client.js';
import type { AdapterTokens } from './adapter-tokens.js';
import { CallTiming } from './call-timing.js';
import type { CallTracker } from './calls.js';
import { EventLoopAnswerSchema, type EventLoopWatch } from './event-loop.js';
import type { EventHub } from './events.js';
import { ApiError, bodyOf, sendJson } from './http.js';
import { specTools, type SpecToolsService } from '@aalis/plugin-spec-tools';
import { AdapterAddAnswerSchema, AdapterAddBody, AdapterRemoveBody, AdaptersAnswerSchema, CallBody, ConsoleAddressAnswerSchema, jsonSchemaOf, MessagesAnswerSchema, ReloadAnswerSchema, SettingsViewSchema, SpecToolsAnswerSchema, StopAnswerSchema, ToolsAnswerSchema, TurnAnswerSchema, TurnBody } from './payloads.js';
import type { SessionCursor, SessionIndex } from './session-index.js';

/**
 * In the docker deployment, refuses a settings change by anyone but the conversation's person (the
 * one who started its root conversation) or an admin. A conversation opened for nobody is an
 * admin's to change (fail closed).
 */
async function mustBeTheirs(ctx: ApiContext, persons: { readonly admins: readonly Identity[] }, id: string, who: Identity): Promise<void> {
  if (persons.admins.some((admin) => admin.platform === who.platform && admin.userId === who.userId)) return;
  const root = await sessionsOf(ctx).peek(await sessionsOf(ctx).rootOf(id));
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
  /** The adapters' tokens (adapter-tokens.ts); the owner manages them (POST /api/adapters). */
  readonly adapters: AdapterTokens;
  /** Ends every request of an adapter under way (its event streams, its calls, a body it is still sending), as if it hung up. */
  readonly hangUpAdapter: (name: string) => void;
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


type Handler = (ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL, params: string[], client: ApiClient) => Promise<void>;

interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: RegExp;
  readonly handler: Handler;
  /**
   * `true`: an adapter's token is taken here too, and the handler keeps it to its platform
   * (api-client.ts). Otherwise the route is the owner's only (the console, the audit log, the
   * daemon's settings): an adapter gets 403.
   */
  readonly adapters?: true;
}

/**
 * The kernel's root of a conversation it holds, noted in the index from the conversation's own
 * record when the index lacks it: the platform of the person it was opened for (its scope). A
 * daemon killed between the kernel's write and the index's left such a conversation, refused to
 * its own adapter for good (found by an attack). One opened for nobody (`anonymous`) stays unnoted.
 */
async function rootNoted(ctx: ApiContext, id: string): Promise<string> {
  const root = await sessionsOf(ctx).rootOf(id);
  if (ctx.index.platformOf(root) === undefined) {
    const platform = /^([^:]+):/.exec((await sessionsOf(ctx).scopeOf(root)) ?? '')?.[1];
    if (platform !== undefined) await ctx.index.seen(root, platform);
  }
  return root;
}

/** Refuses a conversation the daemon has not seen, and one the client may not touch as if it were not there (an adapter learns nothing of another platform's). */
async function knownTo(ctx: ApiContext, client: ApiClient, id: string): Promise<void> {
  await known(ctx, id);
  if (client.kind === 'owner') return;
  try {
    checkKnownConversationOf(client, id, await rootNoted(ctx, id), ctx.index);
  } catch {
    throw unknownConversation(id);
  }
}

/**
 * The turn as the kernel holds its conversation, opened (a new one in the scope of the person who
 * started it, never from somebody else's last used settings: the scope reach uses too):
 * `session.rootId` is the kernel's root (absent for a root), whatever the turn named. Everything
 * after takes the root from the turn (the docker deployment's place, background jobs, approval
 * scopes, events, the index), so a child named without its root, or a root named for a child,
 * is the one conversation everywhere (found by an attack: a child named without `rootId` was
 * bound apart from its root and fell back to the shared workspace). A claimed root that is not
 * the kernel's, or not a root, is refused (core's `root-mismatch`).
 */
async function openedTurn(ctx: ApiContext, turn: OriginTurn): Promise<OriginTurn> {
  const scope = settingsScopeOf(turn);
  const conversation = await sessionsOf(ctx).open(turn.session.id, { scope, ...(turn.session.rootId !== undefined ? { rootId: turn.session.rootId } : {}) });
  const root = await sessionsOf(ctx).rootOf(conversation.id);
  const session = root === turn.session.id ? { id: turn.session.id } : { id: turn.session.id, rootId: root };
  return session.rootId === turn.session.rootId ? turn : { ...turn, session };
}

/**
 * Refuses a turn the client may not send (api-client.ts). A conversation the kernel holds already
 * is judged by its root as the kernel holds it, noted in the index or not: a child named without
 * its root is its root's, and a conversation no turn of the adapter's platform began is not the
 * adapter's (found by an attack: a bridge named the owner's child conversation and ran in its root).
 */
async function checkTurn(ctx: ApiContext, client: ApiClient, turn: OriginTurn): Promise<void> {
  checkTurnOf(client, turn, ctx.index);
  if (client.kind === 'owner') return;
  for (const id of [turn.session.id, turn.session.rootId]) {
    if (id !== undefined && (await sessionsOf(ctx).has(id))) checkKnownConversationOf(client, id, await rootNoted(ctx, id), ctx.index);
  }
}

/** Conversations listed by `GET /api/sessions` when the request gives no limit, and at most. */
const SESSIONS_PAGE = 200;
const SESSIONS_PAGE_MAX = 1000;

/** The `before` of `GET /api/sessions`: a previous page's `next`, which is opaque to clients. */
function cursorOf(text: string): SessionCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string') {
    throw new ApiError('bad-request', `before must be the 'next' of a previous page of GET /api/sessions (got '${escapeInvisible(shownText(text.slice(0, 100)))}'); nothing was listed.`, { fix: 'leave before out for the most recently used conversations' });
  }
  return { lastSeen: value[0], id: value[1] };
}

/** The `limit` of a page: decimal digits only (`1e3`, `0x10`, ` 5` were taken as numbers), from 1 to `max`. */
function limitParam(url: URL, fallback: number, max: number): number {
  const text = url.searchParams.get('limit');
  if (text === null) return fallback;
  const limit = /^[0-9]{1,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= max)) throw new ApiError('bad-request', `limit must be a whole number from 1 to ${max} (got '${escapeInvisible(shownText(text.slice(0, 100)))}'); nothing was listed.`);
  return limit;
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
  // an id no conversation can have is the request's fault, said as such (it was a 500 `internal`)
  const problem = idProblem(id);
  if (problem !== undefined) throw new ApiError('bad-request', `the conversation id in the path '${escapeInvisible(shownText(id))}' ${problem}; nothing was read or done.`);
  if (await sessionsOf(ctx).has(id)) return;
  throw unknownConversation(id);
}

function unknownConversation(id: string): ApiError {
  return new ApiError('not-found', `there is no conversation '${id}'; a conversation begins with its first turn (POST /api/turns) or tool call.`);
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
    path: /^\/api\/adapters$/,
    handler: async (ctx, _req, res) => sendJson(res, 200, AdaptersAnswerSchema.parse({ adapters: ctx.adapters.list() })),
  },
  {
    method: 'POST',
    path: /^\/api\/adapters$/,
    // the owner's: a new adapter (or a new token for one), bound to one platform (adapter-tokens.ts)
    async handler(ctx, req, res) {
      const { name, platform, replace } = await bodyOf(req, AdapterAddBody);
      if (platform === ctx.consoleIdentity.platform) {
        throw new ApiError('bad-request', `'${platform}' is the console's platform (it acts as ${platform}:${ctx.consoleIdentity.userId}); an adapter of it could vouch for the console's identity, so none is made.`, {
          fix: 'give the adapter the platform it speaks for (telegram, say), or move the console to another identity (console.as in aalis.config.json)',
        });
      }
      const added = await ctx.adapters.add(name, platform, replace === true);
      // a replaced token's requests under way (its event streams, its calls) end with it
      ctx.hangUpAdapter(name);
      sendJson(res, 200, AdapterAddAnswerSchema.parse(added));
    },
  },
  {
    method: 'POST',
    path: /^\/api\/adapters\/remove$/,
    async handler(ctx, req, res) {
      const { name } = await bodyOf(req, AdapterRemoveBody);
      if (!(await ctx.adapters.remove(name))) throw new ApiError('not-found', `there is no adapter named '${name}'; nothing was removed.`, { fix: "'aalis adapter list' shows them" });
      // its requests under way end now, with its token (found by attacks: a removed adapter's event
      // stream went on, and a call whose body it sent after the removal ran)
      ctx.hangUpAdapter(name);
      sendJson(res, 200, { removed: name });
    },
  },
  {
    method: 'GET',
    path: /^\/api\/tools$/,
    adapters: true,
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
    adapters: true,
    async handler(ctx, req, res, _url, _params, client) {
      const body = await bodyOf(req, TurnBody);
      await checkTurn(ctx, client, body.turn);
      const { message, reply } = body;
      const turn = await openedTurn(ctx, body.turn);
      const root = turn.session.rootId ?? turn.session.id;
      await ctx.place(turn);
      const service = sessionsOf(ctx);
      const scope = settingsScopeOf(turn);
      await ctx.index.seen(root, turn.platform);
      // again once noted: two adapters naming one new conversation at once leave it the first one's
      checkTurnOf(client, turn, ctx.index);
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
    adapters: true,
    async handler(ctx, req, res, _url, _params, client) {
      const timing = new CallTiming();
      const { callId, tool, params, turn: named } = await bodyOf(req, CallBody);
      await checkTurn(ctx, client, named);
      // Opened here in its starter's scope, as POST /api/turns does, before anything can create it unscoped.
      const turn = await openedTurn(ctx, named);
      const root = turn.session.rootId ?? turn.session.id;
      await ctx.place(turn);
      const noted = ctx.index.note(root, turn.platform);
      checkTurnOf(client, turn, ctx.index);
      // A new conversation is on disk before anything runs in it (GET /api/grants and the console
      // enumerate the index); a failed write refuses the call with nothing run.
      if (noted.isNew) await timing.index(noted.written);
      // Inside `withinCall`, every ask the call makes ends when the caller hangs up (cancelled,
      // audited), so nothing is done for a call nobody waits for.
      const outcome = await ctx.calls.run(res, { session: root, tool, params }, (signal, id) =>
        timing.tool(() => withinCall(signal, () => dispatcher(ctx).dispatch({ tool, params, turn, callId: id, signal }))),
        callId,
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
    adapters: true,
    // an adapter's stream carries its platform's conversations only, each event judged as it comes (a conversation is noted at its first turn)
    handler: async (ctx, _req, res, url, _params, client) => {
      const session = url.searchParams.get('session') ?? undefined;
      // another platform's conversation is not refused (that would say it exists): its events never come
      if (client.kind === 'owner') ctx.hub.add(res, session);
      else ctx.hub.add(res, session, (root) => seesConversation(client, root, ctx.index));
    },
  },
  {
    method: 'GET',
    path: /^\/api\/approvals\/pending$/,
    adapters: true,
    // Each ask comes with the calls running in its conversation: the one that raised it is among them.
    handler: async (ctx, _req, res, url, _params, client) => {
      const session = url.searchParams.get('session') ?? undefined;
      const asks = desk(ctx).pending(session).filter((p) => seesConversation(client, p.session, ctx.index));
      sendJson(res, 200, { pending: asks.map((p) => ({ ...p, running: ctx.calls.runningIn(p.session) })) });
    },
  },
  {
    method: 'POST',
    path: /^\/api\/approvals\/reply$/,
    adapters: true,
    async handler(ctx, req, res, _url, _params, client) {
      const body = await bodyOf(req, ReplyBody);
      const by = actingIdentity(client, body.by, ctx.consoleIdentity, 'answers');
      if (client.kind === 'adapter') {
        // only an ask of its platform's conversations; any other is not there for it (nor said to be another's)
        const code = parseCode(body.code);
        const ask = code.ok ? desk(ctx).pending().find((p) => p.code === code.code) : undefined;
        if (code.ok && (ask === undefined || !seesConversation(client, ask.session, ctx.index))) {
          throw new ApiError('unknown-code', `no approval of platform '${client.platform}' is waiting with code ${code.code}; it may have been answered or expired already. Nothing was answered.`);
        }
      }
      const result = await desk(ctx).reply({ ...body, by });
      if (result.ok) return sendJson(res, 200, result);
      throw new ApiError(result.refused, result.message);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/grants$/,
    adapters: true,
    handler: async (ctx, _req, res, url, _params, client) => {
      const one = url.searchParams.get('session');
      // the grants in force, then who may see them: a walk of every known conversation asking for
      // each one's grants cost conversations × grants
      const grants = desk(ctx).grants.list(one ?? undefined).filter((g) => seesConversation(client, g.session, ctx.index));
      sendJson(res, 200, { grants });
    },
  },
  {
    method: 'POST',
    path: /^\/api\/grants\/revoke$/,
    adapters: true,
    async handler(ctx, req, res, _url, _params, client) {
      const body = await bodyOf(req, RevokeBody);
      // `by` is the identity the adapter authenticated; the desk checks it is an owner.
      const by = actingIdentity(client, body.by, ctx.consoleIdentity, 'revokes');
      if (client.kind === 'adapter') {
        if (!desk(ctx).grants.list().some((g) => g.id === body.id && seesConversation(client, g.session, ctx.index))) throw new ApiError('unknown-grant', `no grant of platform '${client.platform}' has id ${body.id}; nothing was revoked.`);
      }
      const result = await desk(ctx).grants.revoke(body.id, by);
      if (!result.ok) throw new ApiError(result.refused, result.message);
      sendJson(res, 200, result);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/sessions$/,
    adapters: true,
    async handler(ctx, _req, res, url, _params, client) {
      const limit = limitParam(url, SESSIONS_PAGE, SESSIONS_PAGE_MAX);
      const before = url.searchParams.get('before');
      // A page, most recently used first: a listing of them all read every conversation's file
      // and held each in memory (h105); a page reads only its own, and none kept in memory.
      const page = ctx.index.page({ limit, ...(before !== null ? { before: cursorOf(before) } : {}), ...(client.kind === 'adapter' ? { platform: client.platform } : {}) });
      const seen = page.sessions;
      // A conversation whose file cannot be read is said beside the list, not in place of it: one
      // file cut short answered the whole list 500, to the console and every adapter (found by an attack, h105).
      const read = await Promise.all(
        seen.map(async (s) => {
          try {
            return { ok: true as const, entry: { ...s, ...(await settingsView(ctx, s.id)) } };
          } catch (error) {
            return { ok: false as const, entry: { id: s.id, platform: s.platform, message: describeError(error) } };
          }
        }),
      );
      const list = read.flatMap((r) => (r.ok ? [r.entry] : []));
      const unreadable = read.flatMap((r) => (r.ok ? [] : [r.entry]));
      // every person's last used settings are the owner's to see
      const next = page.next !== undefined ? { next: Buffer.from(JSON.stringify([page.next.lastSeen, page.next.id])).toString('base64url') } : {};
      sendJson(res, 200, { sessions: list, total: page.total, ...next, ...(unreadable.length > 0 ? { unreadable } : {}), lastUsed: client.kind === 'owner' ? sessionsOf(ctx).lastUsedByScope() : {} });
    },
  },
  {
    method: 'GET',
    path: /^\/api\/sessions\/([^/]+)\/settings$/,
    adapters: true,
    async handler(ctx, _req, res, _url, [id = ''], client) {
      await knownTo(ctx, client, id);
      sendJson(res, 200, await settingsView(ctx, id));
    },
  },
  {
    method: 'POST',
    path: /^\/api\/sessions\/([^/]+)\/settings$/,
    adapters: true,
    async handler(ctx, req, res, _url, [id = ''], client) {
      const { by, ...change } = await bodyOf(req, SettingsBody);
      await knownTo(ctx, client, id);
      const who = actingIdentity(client, by, ctx.consoleIdentity, 'changes settings');
      // Settings are the owner's, as approvals and revocations are: an adapter says whom it acts for.
      if (by !== undefined && !ctx.kernel.get(authority).isOwner(by)) {
        throw new ApiError('not-owner', `only an owner may change a conversation's settings; ${by.platform}:${by.userId} is not an owner of this daemon, so nothing was changed in '${id}'.`, { fix: "Ask an owner (listed in the config's owners) to change it, or change it from the console." });
      }
      if (ctx.persons !== undefined) await mustBeTheirs(ctx, ctx.persons, id, who);
      // The run mode changes only between turns: a turn runs under the mode it began in.
      const running = change.runMode !== undefined ? agentOf(ctx)?.runningIn(id) : undefined;
      if (running) {
        throw new ApiError('turn-running', `the run mode cannot change while a turn (${running.turnId}) runs in conversation '${id}'; nothing was changed. Wait for its turn/ended event, or stop it (POST /api/sessions/${encodeURIComponent(id)}/stop), then switch.`);
      }
      // The kernel's resolver is the one place the cross-axis rules live; its refusal is passed on.
      // the last used settings of whoever asked for the change, not of whoever started the conversation
      const resolution = await sessionsOf(ctx).change(id, change, { by: personScopeOf(who) });
      if (!resolution.ok) throw new ApiError(resolution.rule, resolution.message);
      sendJson(res, 200, await settingsView(ctx, id));
    },
  },
  {
    method: 'GET',
    path: /^\/api\/sessions\/([^/]+)\/messages$/,
    adapters: true,
    async handler(ctx, _req, res, _url, [id = ''], client) {
      await knownTo(ctx, client, id);
      const { history } = await sessionsOf(ctx).get(id);
      const running = agentOf(ctx)?.runningIn(id);
      sendJson(res, 200, MessagesAnswerSchema.parse({ session: id, messages: history, ...(running ? { running: { turnId: running.turnId, startedAt: running.startedAt } } : {}) }));
    },
  },
  {
    method: 'POST',
    path: /^\/api\/sessions\/([^/]+)\/stop$/,
    adapters: true,
    async handler(ctx, _req, res, _url, [id = ''], client) {
      await knownTo(ctx, client, id);
      // Ends the turn: its model request, its asks (cancelled, audited) and its commands (killed).
      const stopped = await agentOf(ctx)?.stop(id, 'stopped through the API');
      sendJson(res, 200, StopAnswerSchema.parse({ session: id, stopped: stopped !== undefined, ...(stopped ? { turnId: stopped.turnId } : {}) }));
    },
  },
  {
    method: 'GET',
    path: /^\/api\/audit$/,
    async handler(ctx, _req, res, url) {
      const limit = limitParam(url, 200, 10_000);
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
export async function handleApi(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, url: URL, client: ApiClient): Promise<void> {
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
    if (client.kind === 'adapter' && route.adapters !== true) {
      throw new ApiError('forbidden', `adapter '${client.name}' may not use ${req.method} ${url.pathname}: it is the owner's (the console, 'aalis' commands), so nothing was done.`, { fix: "use the daemon's token for it; an adapter's token takes turns, tool calls, events, approvals, grants and settings of its platform's conversations (DAEMON.md, Adapters)" });
    }
    return route.handler(ctx, req, res, url, params, client);
  }
  if (pathMatched) {
    const allowed = ROUTES.filter((r) => r.path.test(url.pathname)).map((r) => r.method);
    throw new ApiError('method-not-allowed', `${req.method} is not accepted on ${url.pathname}; use ${allowed.join(' or ')}.`);
  }
  throw new ApiError('not-found', `there is no API route ${url.pathname}; see packages/cli/DAEMON.md for the routes.`);
}

/** The approval routes' bodies, for DAEMON.md's generated tables. */
export { ReplyBody, RevokeBody, SettingsBody };

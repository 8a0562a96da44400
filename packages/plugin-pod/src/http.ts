import type { IncomingMessage, ServerResponse } from 'node:http';
import { AalisError, describeError, RequestBodyError, readJsonBody, sendErrorAnswer, sendJson, validBody } from '@aalis/core';
import { z } from 'zod';
import { RETURN_KINDS } from './config.js';
import { PodError } from './errors.js';
import { CLASH_CHOICES } from './export-types.js';
import { PANEL_CSP, PANEL_HTML } from './panel.js';
import type { PodService } from './service.js';

const ReturnBody = z.object({ as: z.enum(RETURN_KINDS), file: z.string().min(1).optional(), session: z.string().min(1).optional() }).strict();
const ConfirmBody = z.object({ token: z.string().min(1), onClash: z.enum(CLASH_CHOICES).optional(), remember: z.boolean().optional() }).strict();
const CleanBody = z.union([z.object({ id: z.string().min(1) }).strict(), z.object({ all: z.literal(true) }).strict()]);
const RootBody = z.object({ path: z.string().min(1) }).strict();
const TokenBody = z.object({ token: z.string().min(1) }).strict();

/**
 * Which credential opened the pod's API: the owner's token (`owner`), or a pod capability, the
 * panel's (`capability`). The daemon knows; the pod answers a capability with less.
 */
export type PodCaller = 'owner' | 'capability';

/**
 * A route handler as the daemon's console mounts it: answers and returns true, or returns false
 * when the route is not its. `caller` unset counts as a capability (fails closed).
 */
export type PodRouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL, caller?: PodCaller) => Promise<boolean>;

/**
 * Refuses a capability caller that names a conversation other than `allowed`: a capability opens
 * the pod, not every conversation (found by an attack: the panel's bearer posted a task's return
 * into any conversation, and started tasks that read another conversation's context).
 */
function ownConversationOnly(caller: PodCaller, named: string | undefined, allowed: string | undefined, doing: string): void {
  if (caller === 'owner' || named === undefined || named === allowed) return;
  throw new PodError('not-owner', `${doing} may not name the conversation '${named}' with a pod capability (the panel's credential); it was refused.`, "Leave 'session' out (the task's own conversation is used), or call with the owner's token (`aalis pod` does).");
}

function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return origin === undefined;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/**
 * The pod's HTTP API under `/api/pod/…` and its panel at `/pod`, for the daemon's console. Only
 * same-origin JSON requests change anything; every refusal is core's error envelope, `{ error: { code, message, fix? } }`.
 */
export function podRoutes(service: PodService): PodRouteHandler {
  return async (req, res, url, caller = 'capability') => {
    const path = url.pathname;
    if (path === '/pod' || path === '/pod/') {
      if (req.method !== 'GET') {
        sendErrorAnswer(res, new AalisError('method-not-allowed', 'the panel is read with GET.'));
        return true;
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': PANEL_CSP,
        'x-frame-options': 'DENY',
        // a page of another origin that opened this one keeps no handle on it (it could set its address)
        'cross-origin-opener-policy': 'same-origin',
        'referrer-policy': 'no-referrer',
      });
      res.end(PANEL_HTML);
      return true;
    }
    if (!path.startsWith('/api/pod/')) return false;
    const method = req.method ?? 'GET';
    try {
      const parts = path
        .slice('/api/pod/'.length)
        .split('/')
        .map((p) => {
          try {
            return decodeURIComponent(p);
          } catch {
            throw new PodError('bad-input', `the path segment '${p}' is not valid percent-encoding.`);
          }
        });
      if (method !== 'GET' && !sameOrigin(req)) throw new PodError('bad-input', 'requests that change the pod must come from the console itself (same origin).');
      const body = method === 'POST' ? await readJsonBody(req, z.unknown(), { emptyBody: {} }) : undefined;
      const result = await route(service, method, parts, url, body, caller);
      if (result === undefined) {
        sendErrorAnswer(res, new PodError('not-found', `there is no pod route ${method} ${path}.`));
      } else {
        sendJson(res, result.status ?? 200, result.body);
      }
    } catch (error) {
      // Status and envelope come from core's one table, as the daemon's own routes answer.
      if (error instanceof PodError || error instanceof RequestBodyError) sendErrorAnswer(res, error);
      else sendErrorAnswer(res, new AalisError('failed', `the pod could not do that: ${describeError(error)}`, { cause: error }));
    }
    return true;
  };
}

type Routed = { status?: number; body: unknown } | undefined;

async function route(service: PodService, method: string, parts: string[], url: URL, body: unknown, caller: PodCaller): Promise<Routed> {
  const [head, id, action, extra] = parts;
  if (extra !== undefined) return undefined;
  const get = method === 'GET';
  const post = method === 'POST';
  switch (head) {
    case 'settings':
      if (get && id === undefined) return { body: service.settings() };
      if (post && id === 'root' && action === undefined) return { body: { sandboxRoot: await service.setSandboxRoot(validBody(RootBody, body).path) } };
      return undefined;
    case 'tasks':
      if (id === undefined) {
        if (get) return { body: service.list() };
        if (post) {
          const named = typeof body === 'object' && body !== null && 'session' in body ? String((body as { session: unknown }).session) : undefined;
          ownConversationOnly(caller, named, service.defaultSession, 'a task');
          return { status: 201, body: await service.start(body as never) };
        }
        return undefined;
      }
      if (get && action === undefined) return { body: service.show(id) };
      if (get && action === 'logs') return { body: await service.logs(id, Number(url.searchParams.get('after') ?? 0) || 0) };
      if (get && action === 'files') return { body: await service.files(id) };
      if (get && action === 'file') return { body: await service.readFile(id, url.searchParams.get('path') ?? '') };
      if (post && action === 'cancel') return { body: await service.cancel(id) };
      if (post && action === 'return') {
        const input = validBody(ReturnBody, body);
        ownConversationOnly(caller, input.session, service.show(id).session, "a task's return");
        return { body: await service.returnToConversation(id, input) };
      }
      if (post && action === 'export') return { body: await service.exportFiles({ ...(body as object), taskId: id } as never) };
      return undefined;
    case 'exports':
      if (get && id === undefined) return { body: await service.exports() };
      if (post && id === 'confirm' && action === undefined) return { body: await service.confirmExport(validBody(ConfirmBody, body)) };
      if (post && id === 'cancel' && action === undefined) return { body: { cancelled: service.cancelExport(validBody(TokenBody, body).token) } };
      if (post && id !== undefined && action === 'undo') return { body: await service.undo(id) };
      return undefined;
    case 'grants':
      if (get && id === undefined) return { body: service.grants() };
      if (post && id !== undefined && action === 'revoke') return { body: { revoked: service.revokeGrant(id) } };
      return undefined;
    case 'clean':
      if (post && id === undefined) return { body: await service.clean(validBody(CleanBody, body)) };
      return undefined;
    case 'expire':
      if (post && id === undefined) return { body: await service.expire() };
      return undefined;
    default:
      return undefined;
  }
}

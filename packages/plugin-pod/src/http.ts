import type { IncomingMessage, ServerResponse } from 'node:http';
import { AalisError, describeError, errorEnvelope } from '@aalis/core';
import { z } from 'zod';
import { RETURN_KINDS } from './config.js';
import { httpStatusOf, PodError } from './errors.js';
import { CLASH_CHOICES } from './export-types.js';
import { PANEL_HTML } from './panel.js';
import type { PodService } from './service.js';

const MAX_BODY = 1024 * 1024;

const ReturnBody = z.object({ as: z.enum(RETURN_KINDS), file: z.string().min(1).optional(), session: z.string().min(1).optional() }).strict();
const ConfirmBody = z.object({ token: z.string().min(1), onClash: z.enum(CLASH_CHOICES).optional(), remember: z.boolean().optional() }).strict();
const CleanBody = z.union([z.object({ id: z.string().min(1) }).strict(), z.object({ all: z.literal(true) }).strict()]);
const RootBody = z.object({ path: z.string().min(1) }).strict();
const TokenBody = z.object({ token: z.string().min(1) }).strict();

/** A route handler as the daemon's console mounts it: answers and returns true, or returns false when the route is not its. */
export type PodRouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(text);
}

/** Answers core's one error envelope, `{ error: { code, message, fix? } }`. */
function fail(res: ServerResponse, status: number, error: AalisError): void {
  send(res, status, errorEnvelope(error));
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  // JSON only: a cross-site form cannot send it without a preflight, so no page elsewhere can drive the pod.
  if (!type.toLowerCase().startsWith('application/json')) throw new PodError('bad-input', 'send the request body as JSON (content-type: application/json).');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new PodError('bad-input', `the request body is larger than ${MAX_BODY} bytes.`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new PodError('bad-input', 'the request body is not valid JSON.');
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new PodError('bad-input', `the request was refused: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}.`);
  return parsed.data;
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
  return async (req, res, url) => {
    const path = url.pathname;
    if (path === '/pod' || path === '/pod/') {
      if (req.method !== 'GET') {
        fail(res, 405, new PodError('bad-input', 'the panel is read with GET.'));
        return true;
      }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        'x-frame-options': 'DENY',
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
      const body = method === 'POST' ? await jsonBody(req) : undefined;
      const result = await route(service, method, parts, url, body);
      if (result === undefined) {
        fail(res, 404, new PodError('not-found', `there is no pod route ${method} ${path}.`));
      } else {
        send(res, result.status ?? 200, result.body);
      }
    } catch (error) {
      if (error instanceof PodError) fail(res, httpStatusOf(error.code), error);
      else fail(res, 500, new AalisError('failed', `the pod could not do that: ${describeError(error)}`, { cause: error }));
    }
    return true;
  };
}

type Routed = { status?: number; body: unknown } | undefined;

async function route(service: PodService, method: string, parts: string[], url: URL, body: unknown): Promise<Routed> {
  const [head, id, action, extra] = parts;
  if (extra !== undefined) return undefined;
  const get = method === 'GET';
  const post = method === 'POST';
  switch (head) {
    case 'settings':
      if (get && id === undefined) return { body: service.settings() };
      if (post && id === 'root' && action === undefined) return { body: { sandboxRoot: await service.setSandboxRoot(parse(RootBody, body).path) } };
      return undefined;
    case 'tasks':
      if (id === undefined) {
        if (get) return { body: service.list() };
        if (post) return { status: 201, body: await service.start(body as never) };
        return undefined;
      }
      if (get && action === undefined) return { body: service.show(id) };
      if (get && action === 'logs') return { body: await service.logs(id, Number(url.searchParams.get('after') ?? 0) || 0) };
      if (get && action === 'files') return { body: await service.files(id) };
      if (get && action === 'file') return { body: await service.readFile(id, url.searchParams.get('path') ?? '') };
      if (post && action === 'cancel') return { body: await service.cancel(id) };
      if (post && action === 'return') return { body: await service.returnToConversation(id, parse(ReturnBody, body)) };
      if (post && action === 'export') return { body: await service.exportFiles({ ...(body as object), taskId: id } as never) };
      return undefined;
    case 'exports':
      if (get && id === undefined) return { body: await service.exports() };
      if (post && id === 'confirm' && action === undefined) return { body: await service.confirmExport(parse(ConfirmBody, body)) };
      if (post && id === 'cancel' && action === undefined) return { body: { cancelled: service.cancelExport(parse(TokenBody, body).token) } };
      if (post && id !== undefined && action === 'undo') return { body: await service.undo(id) };
      return undefined;
    case 'grants':
      if (get && id === undefined) return { body: service.grants() };
      if (post && id !== undefined && action === 'revoke') return { body: { revoked: service.revokeGrant(id) } };
      return undefined;
    case 'clean':
      if (post && id === undefined) return { body: await service.clean(parse(CleanBody, body)) };
      return undefined;
    case 'expire':
      if (post && id === undefined) return { body: await service.expire() };
      return undefined;
    default:
      return undefined;
  }
}

import { proveDaemon } from './daemon-proof.js';

/** What a daemon answered to {@link daemonCall}: its status and its body, parsed when it is JSON. */
export interface DaemonAnswer {
  readonly status: number;
  readonly ok: boolean;
  /** The body as JSON; `undefined` when it was empty or not JSON (then {@link DaemonAnswer.text} says what it was). */
  readonly body: unknown;
  readonly text: string;
}

/**
 * One request to a running daemon that carries its token: the server at `url` first proves it
 * knows the token (daemon-proof.ts), and the request goes to the address it proved, never to the
 * name again. A daemon that does not answer is one plain error, said the same for every command.
 */
export async function daemonFetch(url: string, token: string, path: string, init: { method?: 'GET' | 'POST'; body?: unknown; signal?: AbortSignal } = {}): Promise<Response> {
  const proven = await proveDaemon(url, token);
  const { method = 'GET', body, signal } = init;
  try {
    return await fetch(new URL(path, proven), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    throw new Error(`the daemon at ${url} does not answer (${(error as Error).message}); start it with 'aalis serve'.`);
  }
}

/** {@link daemonFetch} and its whole answer read; a body that is not JSON is `undefined`, never a throw. */
export async function daemonCall(url: string, token: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<DaemonAnswer> {
  const response = await daemonFetch(url, token, path, { method, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, ok: response.ok, body: parsed, text };
}

import { readErrorEnvelope } from '@aalis/core';
import { PodError, type PodCommandService, type PodErrorCode } from '@aalis/plugin-pod';
import { daemonCall } from './daemon-request.js';

/**
 * The pod service of a running daemon, through its `/api/pod/…` routes: what `aalis pod` uses,
 * so tasks run in the daemon that owns them and the CLI never writes the pod's state itself.
 */
export function podClient(address: { readonly url: string; readonly token: string } | (() => { readonly url: string; readonly token: string })): PodCommandService {
  // looked up at the first call: the pod's help and its refusal of an unknown command need no daemon
  let known = typeof address === 'function' ? undefined : address;
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    known ??= (address as () => { readonly url: string; readonly token: string })();
    const { url: baseUrl, token } = known;
    const answer = await daemonCall(baseUrl, token, method, `/api/pod/${path}`, body);
    if (!answer.ok || (answer.body === undefined && answer.text !== '')) {
      const error = readErrorEnvelope(answer.body);
      throw new PodError((error?.code ?? 'bad-input') as PodErrorCode, error?.message ?? `the daemon answered ${answer.status}${answer.ok ? ' with something that is not JSON' : ''}`, error?.fix);
    }
    return answer.body as T;
  };
  const enc = encodeURIComponent;
  const client: PodCommandService = {
    start: (input) => call('POST', 'tasks', input),
    async wait(id) {
      for (;;) {
        const task = await client.show(id);
        if (task.state !== 'queued' && task.state !== 'running') return task;
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    list: () => call('GET', 'tasks'),
    show: (id) => call('GET', `tasks/${enc(id)}`),
    logs: (id, after = 0) => call('GET', `tasks/${enc(id)}/logs?after=${after}`),
    files: (id) => call('GET', `tasks/${enc(id)}/files`),
    returnToConversation: (id, input) => call('POST', `tasks/${enc(id)}/return`, input),
    exportFiles: (request) => {
      const { taskId, ...rest } = request;
      return call('POST', `tasks/${enc(taskId)}/export`, rest);
    },
    confirmExport: (input) => call('POST', 'exports/confirm', input),
    exports: () => call('GET', 'exports'),
    undo: (id) => call('POST', `exports/${enc(id)}/undo`, {}),
    grants: () => call('GET', 'grants'),
    revokeGrant: async (id) => (await call<{ revoked: boolean }>('POST', `grants/${enc(id)}/revoke`, {})).revoked,
    clean: (target) => call('POST', 'clean', target),
    expire: () => call('POST', 'expire', {}),
    setSandboxRoot: async (path) => (await call<{ sandboxRoot: string }>('POST', 'settings/root', { path })).sandboxRoot,
  };
  return client;
}

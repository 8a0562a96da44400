// The pod's HTTP API over a real node:http server and a real pod (kernel, bubblewrap, files).
// The model is a scripted chat-completions server: the one part that cannot run here.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readErrorEnvelope } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, startPod } from './harness.testing.js';
import { PANEL_HTML } from './panel.js';
import { servePod } from './serve.testing.js';

let place: Place;
let model: FakeModel;
let env: PodEnv;
let server: Awaited<ReturnType<typeof servePod>>;

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel([{ match: 'note', steps: [{ call: 'write_file', args: { path: 'note.txt', content: 'hello\n' } }, { say: 'wrote note.txt' }] }]);
  env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box') });
  server = await servePod(env.pod);
});
afterAll(async () => {
  await server?.close();
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), body: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text };
};

describe('the pod routes', () => {
  it('serve the panel at /pod as one self-contained page', async () => {
    const page = await call('GET', '/pod');
    expect(page).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
    expect(page.body).toBe(PANEL_HTML);
    expect(PANEL_HTML).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(PANEL_HTML).not.toMatch(/@import|url\(/);
    expect(PANEL_HTML).not.toContain('innerHTML');
  });

  it('leave other paths alone', async () => {
    expect(await call('GET', '/api/other')).toMatchObject({ status: 404, body: 'not a pod route' });
    expect(await call('GET', '/api/pod/nothing')).toMatchObject({ status: 404, body: { error: { code: 'not-found' } } });
  });

  it('start, watch, list files, return and export a task', async () => {
    const started = await call('POST', '/api/pod/tasks', { task: 'write a note' });
    expect(started).toMatchObject({ status: 201, body: { state: expect.stringMatching(/^(queued|running)$/) } });
    const id = started.body.id as string;
    await env.pod.wait(id);
    expect(await call('GET', `/api/pod/tasks/${id}`)).toMatchObject({ status: 200, body: { state: 'succeeded', conclusion: 'wrote note.txt' } });
    const logs = await call('GET', `/api/pod/tasks/${id}/logs?after=2`);
    expect(logs.body.every((e: { seq: number }) => e.seq > 2)).toBe(true);
    expect(await call('GET', `/api/pod/tasks/${id}/files`)).toMatchObject({ body: [{ path: 'note.txt', size: 6 }] });
    expect(await call('GET', `/api/pod/tasks/${id}/file?path=note.txt`)).toMatchObject({ body: { content: 'hello\n', binary: false } });
    expect(await call('POST', `/api/pod/tasks/${id}/return`, { as: 'everything' })).toMatchObject({ status: 400, body: { error: { code: 'invalid-body' } } });
    expect(await call('POST', `/api/pod/tasks/${id}/return`, { as: 'conclusion' })).toMatchObject({ status: 200, body: { message: `[Isolation Pod task ${id}, conclusion] wrote note.txt` } });
    const plan = await call('POST', `/api/pod/tasks/${id}/export`, { files: ['note.txt'], to: place.project });
    expect(plan).toMatchObject({ status: 200, body: { state: 'needs-confirmation' } });
    expect(existsSync(join(place.project, 'note.txt'))).toBe(false);
    const done = await call('POST', '/api/pod/exports/confirm', { token: plan.body.token });
    expect(done).toMatchObject({ status: 200, body: { items: [{ action: 'created' }] } });
    expect(existsSync(join(place.project, 'note.txt'))).toBe(true);
    expect(await call('POST', '/api/pod/exports/confirm', { token: plan.body.token })).toMatchObject({ status: 403, body: { error: { code: 'export-token' } } });
    expect(await call('POST', `/api/pod/exports/${done.body.id}/undo`, {})).toMatchObject({ status: 200 });
    expect(existsSync(join(place.project, 'note.txt'))).toBe(false);
    expect(await call('POST', '/api/pod/clean', { id })).toMatchObject({ body: { cleaned: [id] } });
  });

  it('refuse what changes the pod unless it is same-origin JSON', async () => {
    expect(await call('POST', '/api/pod/tasks', 'task=x', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({ status: 415, body: { error: { code: 'unsupported-media-type', message: expect.stringContaining('as JSON') } } });
    expect(await call('POST', '/api/pod/tasks', { task: 'write a note' }, { origin: 'http://evil.example' })).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('same origin') } } });
    expect(await call('POST', '/api/pod/tasks', '{not json')).toMatchObject({ status: 400, body: { error: { code: 'invalid-body', message: expect.stringContaining('not valid JSON') } } });
    expect(await call('POST', '/api/pod/tasks', { task: '' })).toMatchObject({ status: 400, body: { error: { code: 'bad-input', message: expect.stringContaining('describe the task') } } });
    expect(await call('POST', '/api/pod/settings/root', { path: place.project })).toMatchObject({ status: 403, body: { error: { code: 'root-in-workspace' } } });
    expect(await call('GET', '/api/pod/tasks/pod-none')).toMatchObject({ status: 404, body: { error: { code: 'not-found' } } });
  });

  it("answer every refusal with core's one error envelope, which the clients read back", async () => {
    for (const [method, path, body] of [
      ['POST', '/pod', undefined],
      ['GET', '/api/pod/nothing', undefined],
      ['POST', '/api/pod/tasks', { task: '' }],
      ['POST', '/api/pod/tasks', '{not json'],
    ] as const) {
      const answer = await call(method, path, body);
      expect(Object.keys(answer.body)).toEqual(['error']);
      const error = readErrorEnvelope(answer.body);
      expect(error, `${method} ${path}`).toEqual({ code: expect.stringMatching(/^(bad-input|invalid-body|method-not-allowed|not-found)$/), message: expect.any(String) });
      expect(answer.body.error).toEqual(error);
    }
  });
});

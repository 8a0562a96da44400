// A pod capability (the panel's bearer) opens the pod, not every conversation: a real pod (kernel,
// bubblewrap, files) behind a real node:http server, once as the owner's token and once as a
// capability. Found by an attack: the capability posted a task's return into any conversation.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sessions } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, startPod } from './harness.testing.js';
import { servePod } from './serve.testing.js';

let place: Place;
let model: FakeModel;
let env: PodEnv;
let owner: Awaited<ReturnType<typeof servePod>>;
let capability: Awaited<ReturnType<typeof servePod>>;

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel([{ match: 'note', steps: [{ call: 'write_file', args: { path: 'note.txt', content: 'hello\n' } }, { say: 'wrote note.txt' }] }]);
  env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box') });
  await env.kernel.get(sessions).append('victim', { role: 'user', content: 'private plans' });
  owner = await servePod(env.pod, 'owner');
  capability = await servePod(env.pod, 'capability');
});
afterAll(async () => {
  await owner?.close();
  await capability?.close();
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

const post = async (base: string, path: string, body: unknown) => {
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { id?: string } };
};
const victimLength = async () => (await env.kernel.get(sessions).get('victim')).history.length;

describe('a pod capability', () => {
  it('cannot start a task that reads another conversation', async () => {
    const refused = await post(capability.url, '/api/pod/tasks', { task: 'write a note', session: 'victim' });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'not-owner', fix: expect.stringContaining("owner's token") } } });
    expect(env.pod.list()).toHaveLength(0);
  });

  it("posts a return only into the task's own conversation; the owner's token may name another", async () => {
    const started = await post(capability.url, '/api/pod/tasks', { task: 'write a note' });
    expect(started, JSON.stringify(started.body)).toMatchObject({ status: 201, body: { session: 'main' } });
    const id = started.body.id as string;
    await env.pod.wait(id);
    const before = await victimLength();
    const refused = await post(capability.url, `/api/pod/tasks/${id}/return`, { as: 'conclusion', session: 'victim' });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'not-owner' } } });
    expect(await victimLength()).toBe(before);
    expect(await post(capability.url, `/api/pod/tasks/${id}/return`, { as: 'conclusion', session: 'main' })).toMatchObject({ status: 200, body: { session: 'main' } });
    expect(await post(capability.url, `/api/pod/tasks/${id}/return`, { as: 'conclusion' })).toMatchObject({ status: 200, body: { session: 'main' } });
    expect(await post(owner.url, `/api/pod/tasks/${id}/return`, { as: 'conclusion', session: 'victim' })).toMatchObject({ status: 200, body: { session: 'victim' } });
    expect(await victimLength()).toBe(before + 1);
  }, 60_000);
});

// The pod's acceptance list (README, Tests), end to end: a real kernel, the real reach and approval plugins,
// real python3 under bubblewrap, real files. The model is the one part that cannot run here: a
// local chat-completions server replays scripted tool calls (fake-model.testing.ts).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessions } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PodError } from './errors.js';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, snapshot, startPod } from './harness.testing.js';

const CSV_CODE = [
  'import csv, tempfile, os',
  'rows = [("region", "sales"), ("north", 10), ("south", 20)]',
  "with open('data.csv', 'w', newline='') as f:",
  '    csv.writer(f).writerows(rows)',
  'fd, scratch = tempfile.mkstemp()',
  'os.close(fd)',
  "print('tmp', tempfile.gettempdir())",
  "print('home', os.path.expanduser('~'))",
].join('\n');

const scripts = [
  {
    match: 'generate a CSV with Python',
    steps: [
      { call: 'run_python', args: { code: CSV_CODE } },
      { call: 'finish', args: { conclusion: 'Wrote data.csv with the two regions and their sales.', summary: 'data.csv: north 10, south 20' } },
    ],
  },
  {
    match: 'write outside',
    steps: [
      {
        call: 'run_python',
        args: { code: `open(${JSON.stringify('PROJECT/evil.txt')}, 'w').write('x')`.replace('PROJECT', '__PROJECT__') },
      },
      { call: 'write_file', args: { path: '__PROJECT__/evil2.txt', content: 'x' } },
      { call: 'run_python', args: { code: "open('inside.txt', 'w').write('fine')" } },
      { call: 'finish', args: { conclusion: 'could not write outside; wrote inside.txt', success: true } },
    ],
  },
  {
    match: 'read around',
    steps: [
      { call: 'read_file', args: { path: '__PROJECT__/notes.md' } },
      { call: 'read_file', args: { path: '__OUTSIDE__/reference.txt' } },
      { call: 'read_file', args: { path: '__HOME__/.ssh/id_ed25519' } },
      { call: 'copy_into_sandbox', args: { from: '__PROJECT__/sales.txt' } },
      { call: 'run_python', args: { code: "print(open('__PROJECT__/sales.txt').read().upper())" } },
      { say: 'Read the notes and the sales; copied sales.txt.' },
    ],
  },
  { match: 'sleep forever', steps: [{ call: 'run_python', args: { code: 'import time\ntime.sleep(60)' } }] },
  { match: 'model breaks', steps: [{ status: 500, body: '{"error":"overloaded"}' }] },
  { match: 'model hangs', steps: [{ hang: true }] },
  { match: 'new root task', steps: [{ call: 'run_python', args: { code: "open('second.txt','w').write('2')" } }, { say: 'ok' }] },
  { match: 'first root task', steps: [{ call: 'run_python', args: { code: "open('first.txt','w').write('1')" } }, { say: 'ok' }] },
  { match: 'use the shell', steps: [{ call: 'run_shell', args: { command: 'touch shell-ran' } }, { say: 'tried the shell' }] },
] as const;

function personalise(place: Place) {
  const text = JSON.stringify(scripts).replaceAll('__PROJECT__', place.project).replaceAll('__OUTSIDE__', place.outside).replaceAll('__HOME__', place.home);
  return JSON.parse(text);
}

let place: Place;
let model: FakeModel;
let env: PodEnv;
const sandboxRoot = () => join(place.root, 'pod-sandbox');

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel(personalise(place));
  // a task limit no task of these reaches on a loaded machine (4 s was reached by a sandboxed
  // Python run); the timeout case has a pod of its own with a short one
  env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: sandboxRoot(), timeoutMs: 25_000 });
});
afterAll(async () => {
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

const fingerprint = () => env.kernel.get(sessions).fingerprint('main');

describe('the acceptance list', () => {
  it('without a sandbox root, a task is refused with how to configure one, and nothing is written to the workspace or project', async () => {
    const place2 = makePlace();
    const bare = await startPod(place2, { baseURL: model.baseURL });
    try {
      const before = snapshot(place2.root);
      const error = await bare.pod.start({ task: 'generate a CSV with Python' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PodError);
      expect(error).toMatchObject({ code: 'no-sandbox-root', message: expect.stringMatching(/no sandbox root is configured.*Set 'sandboxRoot'/) });
      expect(snapshot(place2.root)).toEqual(before);
      expect(bare.pod.list()).toEqual([]);
    } finally {
      await bare.kernel.stop();
      rmSync(place2.root, { recursive: true, force: true });
    }
  });

  it('in a kernel with no sandbox service, a task is refused (no-sandbox) and nothing runs: the pod never builds a backend of its own', async () => {
    const place2 = makePlace();
    const bare = await startPod(place2, { baseURL: model.baseURL, sandboxRoot: join(place2.root, 'pod-sandbox') }, { sandbox: false });
    try {
      const before = snapshot(place2.root);
      const asked = model.requests.length;
      const error = await bare.pod.start({ task: 'generate a CSV with Python' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PodError);
      expect(error).toMatchObject({ code: 'no-sandbox', message: expect.stringMatching(/no sandbox backend is provided to the kernel.*never builds a backend of its own/) });
      expect(bare.pod.list()).toEqual([]);
      expect(model.requests.length).toBe(asked);
      expect(snapshot(place2.root)).toEqual(before);
    } finally {
      await bare.kernel.stop();
      rmSync(place2.root, { recursive: true, force: true });
    }
  });

  it('a sandbox root inside the workspace or the project is refused too', async () => {
    for (const root of [join(place.project, 'pod'), place.project, join(env.dataDir, 'workspace', 'pod')]) {
      const error = await env.pod.setSandboxRoot(root).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'root-in-workspace' });
    }
    expect(await env.pod.setSandboxRoot(join(env.dataDir, 'pods')).catch((e: unknown) => e)).toMatchObject({ code: 'root-in-control-plane' });
    expect(await env.pod.setSandboxRoot('relative/dir').catch((e: unknown) => e)).toMatchObject({ code: 'bad-sandbox-root' });
    expect(env.pod.settings().sandboxRoot).toBe(sandboxRoot());
  });

  it('"generate a CSV with Python": the CSV is in the sandbox directory, nothing new in the workspace, the main conversation untouched', async () => {
    const project = snapshot(place.project);
    const print = await fingerprint();
    const historyBefore = (await env.kernel.get(sessions).get('main')).history.length;
    const task = await env.pod.start({ task: 'generate a CSV with Python', subdir: 'reports' });
    expect(task.dirs.base).toBe(join(sandboxRoot(), 'reports', task.id));
    const done = await env.pod.wait(task.id);
    expect(done).toMatchObject({ state: 'succeeded', summary: 'data.csv: north 10, south 20' });
    expect(readFileSync(join(done.dirs.work, 'data.csv'), 'utf8')).toBe('region,sales\r\nnorth,10\r\nsouth,20\r\n');
    expect(snapshot(place.project)).toEqual(project);
    expect(await fingerprint()).toBe(print);
    expect((await env.kernel.get(sessions).get('main')).history).toHaveLength(historyBefore);
    // Temp files and HOME land in the task's own scratch directory.
    const logs = await env.pod.logs(task.id);
    const run = logs.find((e) => e.kind === 'tool-result' && e.tool === 'run_python');
    expect(run).toMatchObject({ ok: true, run: { exitCode: 0, stdout: `tmp ${join(done.dirs.scratch, 'tmp')}\nhome ${join(done.dirs.scratch, 'home')}\n` } });
  });

  it('the independent view shows the full log and the files made', async () => {
    const [task] = env.pod.list().filter((t) => t.task.includes('CSV'));
    const logs = await env.pod.logs(task!.id);
    expect(logs.map((e) => e.kind)).toEqual(['started', 'context', 'model', 'tool-call', 'tool-result', 'model', 'tool-call', 'tool-result', 'finished']);
    expect(logs.find((e) => e.kind === 'tool-call')).toMatchObject({ tool: 'run_python', params: { code: CSV_CODE } });
    expect(await env.pod.files(task!.id)).toEqual([expect.objectContaining({ path: 'data.csv', kind: 'file', size: 34 })]);
  });

  it('the agent read the main conversation as context (finished turns only), and the model never saw a pod tool it was not allowed', () => {
    const request = model.requests.find((r) => r.body.messages.some((m) => m.content?.includes('generate a CSV with Python')))!;
    const context = request.body.messages.find((m) => m.content?.includes('main conversation so far'));
    expect(context?.content).toContain('north sold 10, south sold 20');
    expect(request.authorization).toBe('Bearer test-key');
    expect(request.body.tools?.map((t) => t.function.name)).toEqual(['read_file', 'list_dir', 'write_file', 'copy_into_sandbox', 'run_python', 'finish']);
  });

  it('only a manual return puts one short message in the main conversation, and it exports nothing', async () => {
    const [task] = env.pod.list().filter((t) => t.task.includes('CSV'));
    const before = (await env.kernel.get(sessions).get('main')).history;
    const project = snapshot(place.project);
    const { message } = await env.pod.returnToConversation(task!.id, { as: 'summary' });
    const after = (await env.kernel.get(sessions).get('main')).history;
    expect(after).toHaveLength(before.length + 1);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.at(-1)).toEqual({ role: 'user', content: message });
    expect(message).toBe(`[Isolation Pod task ${task!.id}, summary] data.csv: north 10, south 20`);
    expect(snapshot(place.project)).toEqual(project);
  });

  it('the file appears in the workspace only after a confirmed export; every export is confirmed again; an export returns nothing', async () => {
    const [task] = env.pod.list().filter((t) => t.task.includes('CSV'));
    const print = await fingerprint();
    const target = join(place.project, 'data.csv');
    const first = await env.pod.exportFiles({ taskId: task!.id, files: ['data.csv'], to: place.project });
    expect(first).toMatchObject({ state: 'needs-confirmation', rememberAllowed: false, plan: { items: [{ relative: 'data.csv', target, clash: false }] } });
    expect(existsSync(target)).toBe(false);
    if (first.state !== 'needs-confirmation') throw new Error('expected a plan');
    const record = await env.pod.confirmExport({ token: first.token });
    expect(readFileSync(target, 'utf8')).toContain('north,10');
    expect(record).toMatchObject({ via: 'confirmed', items: [{ action: 'created', target }] });
    // The code was single-use, and the next export to the same place asks again.
    expect(await env.pod.confirmExport({ token: first.token }).catch((e: unknown) => e)).toMatchObject({ code: 'export-token' });
    const second = await env.pod.exportFiles({ taskId: task!.id, files: ['data.csv'], to: place.project, onClash: 'rename' });
    expect(second.state).toBe('needs-confirmation');
    // "Remember" is off by default: ticking it is refused and nothing is written.
    if (second.state !== 'needs-confirmation') throw new Error('expected a plan');
    expect(await env.pod.confirmExport({ token: second.token, remember: true }).catch((e: unknown) => e)).toMatchObject({ code: 'remember-off' });
    expect(existsSync(join(place.project, 'data (1).csv'))).toBe(false);
    expect(env.pod.grants()).toEqual([]);
    expect(await fingerprint()).toBe(print);
    expect((await env.pod.exports()).map((e) => e.id)).toEqual([record.id]);
    await env.pod.undo(record.id);
    expect(existsSync(target)).toBe(false);
  });

  it('the task cannot write outside its directory: the kernel refuses, the refusal is only in the pod log', async () => {
    const print = await fingerprint();
    const task = await env.pod.start({ task: 'write outside the sandbox' });
    const done = await env.pod.wait(task.id);
    expect(done.state).toBe('succeeded');
    expect(existsSync(join(place.project, 'evil.txt'))).toBe(false);
    expect(existsSync(join(place.project, 'evil2.txt'))).toBe(false);
    expect(readFileSync(join(done.dirs.work, 'inside.txt'), 'utf8')).toBe('fine');
    const logs = await env.pod.logs(task.id);
    const refusals = logs.filter((e) => e.kind === 'refused');
    expect(refusals).toHaveLength(2);
    expect(refusals[0]).toMatchObject({ tool: 'run_python', rule: 'outside-sandbox', message: expect.stringContaining(`${place.project}/evil.txt`) });
    expect(refusals[1]).toMatchObject({ tool: 'write_file', rule: 'outside-sandbox' });
    const kernelRefusal = logs.find((e) => e.kind === 'tool-result' && e.tool === 'run_python' && !e.ok);
    expect(kernelRefusal).toMatchObject({ run: { writeDenied: true, stderr: expect.stringMatching(/Read-only file system|Errno 30/) } });
    expect(await fingerprint()).toBe(print);
  });

  it('the task reads the workspace and beyond, never the deny-read list, and changes no source file', async () => {
    const project = snapshot(place.project);
    const outside = snapshot(place.outside);
    const task = await env.pod.start({ task: 'read around the machine' });
    const done = await env.pod.wait(task.id);
    expect(done.state).toBe('succeeded');
    const results = (await env.pod.logs(task.id)).filter((e) => e.kind === 'tool-result');
    expect(results.map((r) => r.ok)).toEqual([true, true, false, true, true]);
    expect(results[0]).toMatchObject({ value: { content: expect.stringContaining('sales figures') } });
    expect(results[1]).toMatchObject({ value: { content: 'outside the workspace\n' } });
    expect(results[2]).toMatchObject({ error: expect.stringContaining('deny-read') });
    expect(results[4]).toMatchObject({ run: { stdout: 'NORTH 10\nSOUTH 20\n\n' } });
    expect(readFileSync(join(done.dirs.work, 'sales.txt'), 'utf8')).toBe('north 10\nsouth 20\n');
    expect(snapshot(place.project)).toEqual(project);
    expect(snapshot(place.outside)).toEqual(outside);
  });

  it('the sandbox root can change: new tasks use the new one, the old sandbox is left as it was', async () => {
    const first = await env.pod.wait((await env.pod.start({ task: 'first root task' })).id);
    const old = snapshot(sandboxRoot());
    const next = join(place.root, 'pod-sandbox-2');
    expect(await env.pod.setSandboxRoot(next)).toBe(next);
    const second = await env.pod.wait((await env.pod.start({ task: 'new root task' })).id);
    expect(second.dirs.base).toBe(join(next, second.id));
    expect(existsSync(join(second.dirs.work, 'second.txt'))).toBe(true);
    expect(snapshot(sandboxRoot())).toEqual(old);
    expect(readFileSync(join(first.dirs.work, 'first.txt'), 'utf8')).toBe('1');
    await env.pod.setSandboxRoot(sandboxRoot());
  });

  it('a failed, a timed-out and a hung task leave the main conversation byte-identical', async () => {
    const short = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'pod-sandbox-short'), timeoutMs: 4000 });
    try {
      const s = short.kernel.get(sessions);
      const print = await s.fingerprint('main');
      const history = JSON.stringify(await s.get('main'));
      const [broke, slow, hung] = await Promise.all(['model breaks', 'sleep forever', 'model hangs'].map((t) => short.pod.start({ task: t })));
      const ended = await Promise.all([broke!, slow!, hung!].map((t) => short.pod.wait(t.id)));
      expect(ended.map((t) => t.state)).toEqual(['failed', 'timed-out', 'timed-out']);
      expect(ended[0]!.error).toMatch(/HTTP 500/);
      expect(await s.fingerprint('main')).toBe(print);
      expect(JSON.stringify(await s.get('main'))).toBe(history);
    } finally {
      await short.kernel.stop();
    }
  });

  it('a tool the user did not allow is never run', async () => {
    const done = await env.pod.wait((await env.pod.start({ task: 'use the shell' })).id);
    expect(existsSync(join(done.dirs.work, 'shell-ran'))).toBe(false);
    expect((await env.pod.logs(done.id)).find((e) => e.kind === 'refused')).toMatchObject({ tool: 'run_shell', rule: 'tool-not-allowed' });
  });

  it('when the user neither returns nor exports, the main conversation never knows', async () => {
    const print = await fingerprint();
    const project = snapshot(place.project);
    const done = await env.pod.wait((await env.pod.start({ task: 'generate a CSV with Python again' })).id);
    expect(done.state).toBe('succeeded');
    await env.pod.logs(done.id);
    await env.pod.files(done.id);
    expect(await fingerprint()).toBe(print);
    expect(snapshot(place.project)).toEqual(project);
  });
});

describe('a crash', () => {
  it('a task running when the daemon died is recovered as crashed, and the main conversation is unchanged', async () => {
    const place3 = makePlace();
    const hang = await startFakeModel([{ match: 'hang', steps: [{ hang: true }] }]);
    const first = await startPod(place3, { baseURL: hang.baseURL, sandboxRoot: join(place3.root, 'box') });
    const print = await first.kernel.get(sessions).fingerprint('main');
    const task = await first.pod.start({ task: 'hang on' });
    // The process "dies" once its state on disk says running (what a crash then leaves; 300 ms
    // was a guess); a new daemon opens it.
    const tasksDoc = join(first.dataDir, 'pod', 'tasks.json');
    const onDisk = (): { id: string; state: string }[] => {
      try {
        return JSON.parse(readFileSync(tasksDoc, 'utf8'));
      } catch {
        return []; // not written yet
      }
    };
    for (const end = Date.now() + 20_000; !onDisk().some((t) => t.id === task.id && t.state === 'running') && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    const left = readFileSync(tasksDoc, 'utf8');
    await first.kernel.stop();
    writeFileSync(tasksDoc, left);
    const second = await startPod(place3, { baseURL: hang.baseURL, sandboxRoot: join(place3.root, 'box') }, { dataDir: first.dataDir, seed: false });
    try {
      expect(JSON.parse(left)[0].state).toBe('running');
      expect(second.pod.show(task.id)).toMatchObject({ state: 'crashed', error: expect.stringContaining('daemon stopped') });
      expect(await second.kernel.get(sessions).fingerprint('main')).toBe(print);
    } finally {
      await second.kernel.stop();
      await hang.close();
      rmSync(place3.root, { recursive: true, force: true });
    }
  });
});

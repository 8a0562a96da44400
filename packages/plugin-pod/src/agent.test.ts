// How the pod's agent behaves under its config: tools, writes, context, caches, network, limits,
// cancellation and queueing. Real kernel, bubblewrap, python3, node and files; the model is a
// scripted chat-completions server (the one part that cannot run here).
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { sessions } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodConfigInput } from './config.js';
import { type FakeModel, type Script, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, startPod } from './harness.testing.js';

let place: Place;
let model: FakeModel;

const scripts = (): Script[] => [
  { match: 'no writes', steps: [{ call: 'write_file', args: { path: 'a.txt', content: 'x' } }, { call: 'run_python', args: { code: "import tempfile\ntempfile.mkstemp()\nopen('b.txt','w')" } }, { say: 'ok' }] },
  { match: 'context off', steps: [{ say: 'ok' }] },
  // the third: arguments nested 200,000 deep, which the task's log would write as JSON
  { match: 'garbled', steps: [{ calls: [{ call: 'delete_everything', args: {} }] }, { call: 'read_file', args: { path: 7 } }, { call: 'read_file', args: `{"path":${'['.repeat(200_000)}${']'.repeat(200_000)}}` }, { say: 'ok' }] },
  { match: 'loop', steps: [{ call: 'list_dir', args: {} }, { call: 'list_dir', args: {} }, { call: 'list_dir', args: {} }] },
  { match: 'give up', steps: [{ call: 'finish', args: { conclusion: 'could not do it', summary: 'no data', success: false } }] },
  {
    match: 'node and shell',
    steps: [
      { call: 'run_node', args: { code: "require('fs').writeFileSync('from-node.txt', process.env.TMPDIR)" } },
      { call: 'run_shell', args: { command: `echo hi > shell.txt; touch ${place.outside}/from-shell.txt; echo $HOME` } },
      { say: 'ok' },
    ],
  },
  {
    match: 'caches',
    steps: [
      { call: 'write_file', args: { path: 'mod.py', content: 'X = 1\n' } },
      { call: 'run_python', args: { code: 'import mod, os\nprint(mod.X, os.environ["XDG_CACHE_HOME"])' } },
      { say: 'ok' },
    ],
  },
  {
    match: 'network',
    steps: [{ call: 'run_python', args: { code: "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))" } }, { say: 'ok' }],
  },
  {
    match: 'hostile',
    steps: [
      { call: 'run_shell', args: { command: `mkfifo pipe; mkdir dir; echo ok > dir/real.txt; ln -s ${place.home}/.ssh/id_ed25519 key; ln -s ${place.home}/.ssh/id_ed25519 dir/key` } },
      { call: 'read_file', args: { path: 'pipe' } },
      { call: 'read_file', args: { path: 'key' } },
      { say: 'planted' },
    ],
  },
  {
    match: 'kernel',
    steps: [
      { call: 'run_shell', args: { command: 'ln -s /proc/self/environ env-link' } },
      { call: 'read_file', args: { path: '/proc/self/environ' } },
      { call: 'read_file', args: { path: `/proc/${process.pid}/mem` } },
      { call: 'read_file', args: { path: 'env-link' } },
      { call: 'list_dir', args: { path: '/sys/kernel' } },
      { call: 'copy_into_sandbox', args: { from: '/proc/self/environ', to: 'environ.txt' } },
      { say: 'tried' },
    ],
  },
  { match: 'long', steps: [{ call: 'run_python', args: { code: 'import time\ntime.sleep(30)' } }] },
];

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel(scripts());
});
afterAll(async () => {
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

async function withPod<T>(config: Partial<PodConfigInput>, body: (env: Awaited<ReturnType<typeof startPod>>) => Promise<T>): Promise<T> {
  const env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box'), ...config });
  try {
    return await body(env);
  } finally {
    await env.kernel.stop();
  }
}

describe('the agent', () => {
  it('with writes off, writes nothing in its directory (temp files still go to scratch)', () =>
    withPod({ allowWrites: false }, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'no writes' })).id);
      expect(readdirSync(t.dirs.work)).toEqual([]);
      const refused = (await pod.logs(t.id)).filter((e) => e.kind === 'refused');
      expect(refused.map((e) => e.tool)).toEqual(['write_file', 'run_python']);
      expect(readdirSync(join(t.dirs.scratch, 'tmp'))).toHaveLength(1);
    }));

  it('with context reading off, works from the task alone', () =>
    withPod({ readContext: false }, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'context off' })).id);
      expect((await pod.logs(t.id)).find((e) => e.kind === 'context')).toMatchObject({ enabled: false });
      const request = model.requests.find((r) => r.body.messages.some((m) => m.content === 'context off'))!;
      expect(JSON.stringify(request.body.messages)).not.toContain('north');
    }));

  it('answers an unknown tool and bad arguments with errors, and goes on', () =>
    withPod({}, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'garbled' })).id);
      expect(t.state).toBe('succeeded');
      const logs = await pod.logs(t.id);
      expect(logs.find((e) => e.kind === 'refused')).toMatchObject({ tool: 'delete_everything', rule: 'tool-not-allowed' });
      const results = logs.filter((e) => e.kind === 'tool-result' && e.tool === 'read_file');
      expect(results).toMatchObject([{ ok: false, error: expect.stringContaining('refused its parameters') }, { ok: false, error: expect.stringContaining('deeper than 64 levels') }]);
    }));

  it('stops after model.maxSteps, and a reported failure is a failure', () =>
    withPod({ model: { baseURL: model.baseURL, model: 'm', maxSteps: 2 } }, async ({ pod }) => {
      expect(await pod.wait((await pod.start({ task: 'loop' })).id)).toMatchObject({ state: 'failed', error: expect.stringContaining('within 2 model replies') });
      expect(await pod.wait((await pod.start({ task: 'give up' })).id)).toMatchObject({ state: 'failed', conclusion: 'could not do it', summary: 'no data' });
    }));

  it('runs Node.js and shell when allowed, still only writing its own directory', () =>
    withPod({ tools: ['run_node', 'run_shell'] }, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'node and shell' })).id);
      expect(existsSync(join(t.dirs.work, 'from-node.txt'))).toBe(true);
      expect(existsSync(join(t.dirs.work, 'shell.txt'))).toBe(true);
      expect(existsSync(join(place.outside, 'from-shell.txt'))).toBe(false);
      const shell = (await pod.logs(t.id)).find((e) => e.kind === 'tool-result' && e.tool === 'run_shell');
      expect(shell).toMatchObject({ ok: false, run: { writeDenied: true, stdout: `${join(t.dirs.scratch, 'home')}\n` } });
    }));

  it('keeps language caches in its scratch directory, not next to the code', () =>
    withPod({}, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'caches' })).id);
      expect(existsSync(join(t.dirs.work, '__pycache__'))).toBe(false);
      expect(existsSync(join(t.dirs.scratch, 'cache', 'pycache'))).toBe(true);
    }));

  it('has no network unless the config allows it: its code sees a loopback of its own and nothing else', () =>
    withPod({}, async ({ pod }) => {
      expect(Object.keys(networkInterfaces()).length).toBeGreaterThan(1);
      const t = await pod.wait((await pod.start({ task: 'network' })).id);
      const run = (await pod.logs(t.id)).find((e) => e.kind === 'tool-result' && e.tool === 'run_python');
      expect(run).toMatchObject({ run: { exitCode: 0, stdout: "['lo']\n" } });
    }));

  it('is not fooled by what its code planted: a FIFO does not hang it, symlinks out are not read or exported', () =>
    withPod({ tools: ['read_file', 'run_shell'] }, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'hostile' })).id);
      expect(t.state).toBe('succeeded');
      const refused = (await pod.logs(t.id)).filter((e) => e.kind === 'refused');
      expect(refused.map((e) => (e.kind === 'refused' ? e.rule : ''))).toEqual(['not-a-file', 'deny-read']);
      expect(await pod.exportFiles({ taskId: t.id, files: ['key'], to: place.project }).catch((e: unknown) => e)).toMatchObject({ code: 'export-source' });
      const started = await pod.exportFiles({ taskId: t.id, files: ['dir'], to: place.project });
      expect(started.state === 'needs-confirmation' && started.plan.items.map((i) => i.relative)).toEqual(['dir/real.txt']);
    }));

  // The pod's host-side tools run in the daemon's process: its /proc is the daemon's (an attack read
  // the owner's token out of /proc/self/mem, 256 KiB a read_file), /sys the host kernel's.
  it("never reads the daemon's /proc or /sys host-side, named or through a symlink its code made", () =>
    withPod({ tools: ['read_file', 'list_dir', 'copy_into_sandbox', 'run_shell'] }, async ({ pod }) => {
      const t = await pod.wait((await pod.start({ task: 'kernel' })).id);
      expect(t.state).toBe('succeeded');
      const refused = (await pod.logs(t.id)).filter((e) => e.kind === 'refused');
      expect(refused.map((e) => (e.kind === 'refused' ? e.rule : ''))).toEqual(['kernel-tree', 'kernel-tree', 'kernel-tree', 'kernel-tree', 'kernel-tree']);
      expect((await pod.files(t.id)).map((f) => f.path)).not.toContain('environ.txt');
    }));

  it('exports nothing of a task that is still running', () =>
    withPod({}, async ({ pod }) => {
      const t = await pod.start({ task: 'long three' });
      expect(await pod.exportFiles({ taskId: t.id, files: ['x'], to: place.project }).catch((e: unknown) => e)).toMatchObject({ code: 'still-running' });
      await pod.cancel(t.id);
    }));

  it('runs at most maxConcurrent tasks; a cancelled one leaves the conversation as it was', () =>
    withPod({ maxConcurrent: 1 }, async ({ pod, kernel }) => {
      const print = await kernel.get(sessions).fingerprint('main');
      const first = await pod.start({ task: 'long one' });
      const second = await pod.start({ task: 'long two' });
      expect(pod.show(second.id).state).toBe('queued');
      expect((await pod.cancel(second.id)).state).toBe('cancelled');
      await new Promise((r) => setTimeout(r, 300)); // a chance to get further: the cancel below holds at any point of the first
      expect((await pod.cancel(first.id)).state).toBe('cancelled');
      expect(await kernel.get(sessions).fingerprint('main')).toBe(print);
    }));
});

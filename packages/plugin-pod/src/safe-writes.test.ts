// The pod's host-side writes land only where they were judged: the task's own code (real python3
// under bubblewrap) plants dangling symlinks in its work directory pointing to HOME, to the
// workspace and to .git/hooks, then the agent copies and writes onto those names; a subdirectory
// through a symlink leaves no directory behind; an export onto a planted symlink is refused.
// A real kernel, real files; the model is the scripted stand-in.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, snapshot, startPod } from './harness.testing.js';

let place: Place;
let model: FakeModel;
let env: PodEnv;
const sandboxRoot = () => join(place.root, 'pod-sandbox');

const PLANT = (place: Place) =>
  [
    'import os',
    `os.symlink(${JSON.stringify(join(place.home, '.bashrc-planted'))}, 'to-home.txt')`,
    `os.symlink(${JSON.stringify(join(place.project, 'planted.txt'))}, 'to-workspace.txt')`,
    `os.symlink(${JSON.stringify(join(place.project, '.git', 'hooks', 'pre-commit'))}, 'to-hook')`,
    'os.mkdir("tree")',
    `os.symlink(${JSON.stringify(join(place.outside, 'planted-in-tree.txt'))}, 'tree/sales.txt')`,
  ].join('\n');

beforeAll(async () => {
  place = makePlace();
  mkdirSync(join(place.project, '.git', 'hooks'), { recursive: true });
  mkdirSync(join(place.project, 'tree'));
  // A folder with a name that is not UTF-8 beside a plain one.
  mkdirSync(join(place.project, 'odd'));
  writeFileSync(Buffer.concat([Buffer.from(join(place.project, 'odd')), Buffer.from('/n\xff.txt', 'latin1')]), 'odd\n');
  writeFileSync(join(place.project, 'odd', 'plain.txt'), 'plain\n');
  const sales = join(place.project, 'sales.txt');
  const scripts = [
    {
      match: 'plant and copy',
      steps: [
        { call: 'run_python', args: { code: PLANT(place) } },
        { call: 'copy_into_sandbox', args: { from: sales, to: 'to-home.txt' } },
        { call: 'copy_into_sandbox', args: { from: sales, to: 'to-workspace.txt' } },
        { call: 'copy_into_sandbox', args: { from: sales, to: 'to-hook' } },
        { call: 'write_file', args: { path: 'to-hook', content: '#!/bin/sh\necho pwned\n' } },
        { call: 'copy_into_sandbox', args: { from: sales, to: 'tree/sales.txt' } },
        { call: 'copy_into_sandbox', args: { from: sales, to: 'copied.txt' } },
        { call: 'copy_into_sandbox', args: { from: join(place.project, 'odd') } },
        { call: 'list_dir', args: { path: join(place.project, 'odd') } },
        { call: 'finish', args: { conclusion: 'done' } },
      ],
    },
    { match: 'through a link', steps: [{ say: 'never runs' }] },
    { match: 'make a file', steps: [{ call: 'write_file', args: { path: 'result.txt', content: 'result\n' } }, { call: 'finish', args: { conclusion: 'ok' } }] },
  ];
  model = await startFakeModel(scripts as never);
  env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: sandboxRoot(), timeoutMs: 20_000 });
});
afterAll(async () => {
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

describe('host-side writes of the pod', () => {
  it('copy_into_sandbox and write_file onto dangling symlinks the task planted are refused, and nothing outside the task changes', async () => {
    const before = { home: snapshot(place.home), outside: snapshot(place.outside) };
    const task = await env.pod.start({ task: 'plant and copy' });
    const done = await env.pod.wait(task.id);
    expect(done.state).toBe('succeeded');
    const logs = await env.pod.logs(task.id);
    const refused = logs.filter((e) => e.kind === 'refused');
    expect(refused.map((e) => (e.kind === 'refused' ? [e.tool, e.rule] : []))).toEqual([
      ['copy_into_sandbox', 'final-symlink'],
      ['copy_into_sandbox', 'final-symlink'],
      ['copy_into_sandbox', 'final-symlink'],
      ['write_file', 'final-symlink'],
      ['copy_into_sandbox', 'final-symlink'],
    ]);
    // The plant itself ran (the links are there, still links), and the legitimate copy landed.
    for (const name of ['to-home.txt', 'to-workspace.txt', 'to-hook', 'tree/sales.txt']) expect(lstatSync(join(done.dirs.work, name)).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(done.dirs.work, 'copied.txt'), 'utf8')).toBe('north 10\nsouth 20\n');
    // A name that is not UTF-8 is skipped and said so; the rest of the folder is copied.
    expect(readdirSync(join(done.dirs.work, 'odd'))).toEqual(['plain.txt']);
    const oddCopy = logs.filter((e) => e.kind === 'tool-result' && e.tool === 'copy_into_sandbox' && e.ok).at(-1);
    expect(JSON.stringify(oddCopy)).toContain('its name is not UTF-8');
    // list_dir shows it marked with its bytes, as the main agent's list_dir does.
    const listed = logs.filter((e) => e.kind === 'tool-result' && e.tool === 'list_dir').at(-1);
    expect(JSON.stringify(listed)).toContain('"notUtf8":"n\\\\xff.txt"');
    expect(existsSync(join(place.home, '.bashrc-planted'))).toBe(false);
    expect(existsSync(join(place.project, 'planted.txt'))).toBe(false);
    expect(readdirSync(join(place.project, '.git', 'hooks'))).toEqual([]);
    expect({ home: snapshot(place.home), outside: snapshot(place.outside) }).toEqual(before);
  }, 60_000);

  it('a subdirectory through a symlink into the workspace is refused before any directory is made', async () => {
    mkdirSync(sandboxRoot(), { recursive: true });
    symlinkSync(join(place.project, 'tree'), join(sandboxRoot(), 'into-workspace'));
    const before = snapshot(place.project);
    const error = await env.pod.start({ task: 'through a link', subdir: 'into-workspace/deeper' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad-sandbox-root', message: expect.stringContaining('made no directory') });
    expect(snapshot(place.project)).toEqual(before);
    expect(readdirSync(join(place.project, 'tree'))).toEqual([]);
  });

  it("a subdirectory inside another task's directory is refused before any directory is made: that task's code could rewrite the new one's log", async () => {
    const first = await env.pod.wait((await env.pod.start({ task: 'make a file', subdir: 'first' })).id);
    const inside = join(sandboxRoot(), 'first');
    const taskDir = readdirSync(inside).find((n) => n.startsWith('pod-'))!;
    const before = snapshot(join(inside, taskDir));
    for (const subdir of [`first/${taskDir}/work/sub`, `first/${taskDir}`]) {
      const error = await env.pod.start({ task: 'make a file', subdir }).catch((e: unknown) => e);
      expect(error, subdir).toMatchObject({ code: 'bad-sandbox-root', message: expect.stringContaining('inside the directory of another task') });
    }
    expect(snapshot(join(inside, taskDir))).toEqual(before);
    expect(first.state).toBe('succeeded');
  });

  it("a subdirectory reaching below a root placed above them into the daemon's data or install is refused, and nothing is made", async () => {
    // a root above a project (or the daemon's own folders) is taken; what lies below it was not judged
    const wide = await startPod(place, { baseURL: model.baseURL, sandboxRoot: place.root, timeoutMs: 20_000 });
    try {
      for (const subdir of [basename(wide.dataDir), 'install', `${basename(wide.dataDir)}/deeper`]) {
        const before = snapshot(place.root);
        const error = await wide.pod.start({ task: 'make a file', subdir }).catch((e: unknown) => e);
        expect(error, subdir).toMatchObject({ code: 'root-in-control-plane', message: expect.stringContaining('made no directory') });
        expect(snapshot(place.root)).toEqual(before);
      }
    } finally {
      await wide.kernel.stop();
    }
  });

  it('an export onto a symlink planted after the plan is refused, and the place it points to stays untouched', async () => {
    const task = await env.pod.start({ task: 'make a file' });
    expect((await env.pod.wait(task.id)).state).toBe('succeeded');
    const started = await env.pod.exportFiles({ taskId: task.id, files: ['result.txt'], to: join(place.project, 'exports'), mode: 'copy' });
    expect(started.state).toBe('needs-confirmation');
    if (started.state !== 'needs-confirmation') return;
    mkdirSync(join(place.project, 'exports'));
    symlinkSync(join(place.outside, 'via-export.txt'), join(place.project, 'exports', 'result.txt'));
    const before = snapshot(place.outside);
    const error = await env.pod.confirmExport({ token: started.token, onClash: 'overwrite' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'export-target' });
    expect(String((error as Error).message)).toMatch(/final-symlink|now resolves/);
    expect(existsSync(join(place.outside, 'via-export.txt'))).toBe(false);
    expect(snapshot(place.outside)).toEqual(before);
  });
});

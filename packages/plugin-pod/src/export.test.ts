// Export and return in detail: plans, single-use confirmation, clashes, copy and move, the log,
// undo, the opt-in "remember" and its revocation, and that export and return never trigger each
// other nor anything else in the main conversation. Real kernel, real files; the model is a
// scripted chat-completions server (it cannot run here).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessions } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportStart } from './export-types.js';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, RecordingBus, snapshot, startPod } from './harness.testing.js';
import type { TaskRecord } from './task.js';

let place: Place;
let model: FakeModel;
let env: PodEnv;
let task: TaskRecord;
const bus = new RecordingBus();

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel([
    {
      match: 'make files',
      steps: [
        {
          calls: [
            { call: 'write_file', args: { path: 'report.txt', content: 'report v1\n' } },
            { call: 'write_file', args: { path: 'out/a.txt', content: 'a\n' } },
            { call: 'write_file', args: { path: 'out/sub/b.txt', content: 'b\n' } },
            { call: 'write_file', args: { path: 'moved.txt', content: 'to move\n' } },
          ],
        },
        { call: 'finish', args: { conclusion: 'Made report.txt and out/.\n\nDetails follow at length.', success: true } },
      ],
    },
  ]);
  env = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box'), export: { allowRemember: true } }, { events: bus });
  task = await env.pod.wait((await env.pod.start({ task: 'make files' })).id);
  expect(task.state).toBe('succeeded');
});
afterAll(async () => {
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

const plan = async (request: Partial<Parameters<PodEnv['pod']['exportFiles']>[0]> & { files: string[] }) => {
  const started: ExportStart = await env.pod.exportFiles({ taskId: task.id, to: place.project, ...request });
  if (started.state !== 'needs-confirmation') throw new Error(`expected a plan, got ${started.state}`);
  return started;
};

describe('export to the workspace', () => {
  it("a confirmation code is never read as an option where it is pasted (`aalis pod confirm <code>`): hex, never a leading '-'", async () => {
    const tokens = await Promise.all(Array.from({ length: 64 }, () => plan({ files: ['report.txt'] }).then((p) => p.token)));
    for (const t of tokens) env.pod.cancelExport(t);
    for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{12}$/);
  });

  it('a folder is exported with its structure; undo removes what it created, folders included', async () => {
    const p = await plan({ files: ['out'], to: 'exports' });
    expect(p.plan.items.map((i) => i.target)).toEqual([join(place.project, 'exports', 'out', 'a.txt'), join(place.project, 'exports', 'out', 'sub', 'b.txt')]);
    const record = await env.pod.confirmExport({ token: p.token });
    expect(readFileSync(join(place.project, 'exports', 'out', 'sub', 'b.txt'), 'utf8')).toBe('b\n');
    const undo = await env.pod.undo(record.id);
    expect(undo.items.map((i) => i.action)).toEqual(['removed', 'removed']);
    expect(existsSync(join(place.project, 'exports'))).toBe(false);
    expect(await env.pod.undo(record.id).catch((e: unknown) => e)).toMatchObject({ code: 'undo-refused' });
  });

  // A text listing gives a name that is not UTF-8 as U+FFFD: the export named a file that is not
  // there (or another one) and left the real one behind.
  it('a folder holding a name that is not UTF-8 is refused whole, before anything is written', async () => {
    const odd = Buffer.concat([Buffer.from(`${task.dirs.work}/odd/`), Buffer.from([0x6e, 0xff])]);
    mkdirSync(join(task.dirs.work, 'odd'));
    writeFileSync(join(task.dirs.work, 'odd', 'fine.txt'), 'fine\n');
    writeFileSync(odd, 'kept\n');
    const refused = await env.pod.exportFiles({ taskId: task.id, to: place.project, files: ['odd'] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'export-source', message: expect.stringMatching(/holds an entry named 'n\\xff', which is not UTF-8.*nothing was exported/) });
    expect(existsSync(join(place.project, 'odd'))).toBe(false);
    // The listing shows it, marked, with what is below it: a text listing skipped it and its subtree.
    const oddDir = Buffer.concat([Buffer.from(`${task.dirs.work}/odd/`), Buffer.from([0x64, 0xfe])]);
    mkdirSync(oddDir);
    writeFileSync(Buffer.concat([oddDir, Buffer.from('/inner.txt')]), 'in\n');
    const listed = await env.pod.files(task.id);
    expect(listed.filter((f) => f.path.startsWith('odd/'))).toEqual([
      { path: 'odd/d\ufffd', kind: 'dir', size: expect.any(Number), modifiedAt: expect.any(Number), notUtf8: 'odd/d\\xfe' },
      { path: 'odd/d\ufffd/inner.txt', kind: 'file', size: 3, modifiedAt: expect.any(Number), notUtf8: 'odd/d\\xfe/inner.txt' },
      { path: 'odd/fine.txt', kind: 'file', size: 5, modifiedAt: expect.any(Number) },
      { path: 'odd/n\ufffd', kind: 'file', size: 5, modifiedAt: expect.any(Number), notUtf8: 'odd/n\\xff' },
    ]);
    rmSync(join(task.dirs.work, 'odd'), { recursive: true });
  });

  it('a clash is the user’s choice: nothing without one, then skip, rename or overwrite; undo restores what was there', async () => {
    const existing = join(place.project, 'report.txt');
    writeFileSync(existing, 'mine\n');
    const p = await plan({ files: ['report.txt'] });
    expect(p.plan.clashes).toBe(1);
    expect(await env.pod.confirmExport({ token: p.token }).catch((e: unknown) => e)).toMatchObject({ code: 'export-clash' });
    const skipped = await env.pod.confirmExport({ token: p.token, onClash: 'skip' });
    expect(skipped.items[0]!.action).toBe('skipped');
    expect(readFileSync(existing, 'utf8')).toBe('mine\n');

    const renamed = await env.pod.confirmExport({ token: (await plan({ files: ['report.txt'], onClash: 'rename' })).token });
    expect(renamed.items[0]).toMatchObject({ action: 'renamed', target: join(place.project, 'report (1).txt') });
    expect(readFileSync(join(place.project, 'report (1).txt'), 'utf8')).toBe('report v1\n');

    const overwritten = await env.pod.confirmExport({ token: (await plan({ files: ['report.txt'] })).token, onClash: 'overwrite' });
    expect(readFileSync(existing, 'utf8')).toBe('report v1\n');
    await env.pod.undo(overwritten.id);
    expect(readFileSync(existing, 'utf8')).toBe('mine\n');
    await env.pod.undo(renamed.id);
    expect(existsSync(join(place.project, 'report (1).txt'))).toBe(false);
  });

  it('undo leaves a target the user changed since', async () => {
    const record = await env.pod.confirmExport({ token: (await plan({ files: ['out/a.txt'], to: 'keep' })).token });
    writeFileSync(join(place.project, 'keep', 'a.txt'), 'edited by me\n');
    const undo = await env.pod.undo(record.id);
    expect(undo.items[0]).toMatchObject({ action: 'kept', note: expect.stringContaining('changed') });
    expect(readFileSync(join(place.project, 'keep', 'a.txt'), 'utf8')).toBe('edited by me\n');
  });

  it('copy leaves the sandbox file; move removes it, and undo of a move puts it back', async () => {
    await env.pod.confirmExport({ token: (await plan({ files: ['report.txt'], to: 'copied' })).token });
    expect(existsSync(join(task.dirs.work, 'report.txt'))).toBe(true);
    const moved = await env.pod.confirmExport({ token: (await plan({ files: ['moved.txt'], mode: 'move' })).token });
    expect(existsSync(join(task.dirs.work, 'moved.txt'))).toBe(false);
    expect(readFileSync(join(place.project, 'moved.txt'), 'utf8')).toBe('to move\n');
    await env.pod.undo(moved.id);
    expect(readFileSync(join(task.dirs.work, 'moved.txt'), 'utf8')).toBe('to move\n');
    expect(existsSync(join(place.project, 'moved.txt'))).toBe(false);
  });

  it('targets outside the workspace need the user to say so; the control plane, landings and secrets never', async () => {
    expect(await env.pod.exportFiles({ taskId: task.id, files: ['report.txt'], to: place.outside }).catch((e: unknown) => e)).toMatchObject({
      code: 'export-target',
      message: expect.stringContaining('outside the workspace'),
    });
    const p = await plan({ files: ['report.txt'], to: place.outside, outsideWorkspace: true });
    expect(p.plan.to).toBe(place.outside);
    env.pod.cancelExport(p.token);
    expect(existsSync(join(place.outside, 'report.txt'))).toBe(false);
    for (const to of [join(env.dataDir, 'self'), join(place.project, '.git', 'hooks'), join(place.home, '.ssh'), env.dataDir]) {
      expect(await env.pod.exportFiles({ taskId: task.id, files: ['report.txt'], to, outsideWorkspace: true }).catch((e: unknown) => e)).toMatchObject({ code: 'export-target' });
    }
    for (const files of [['../../../home/project/notes.md'], ['missing.txt'], [place.project]]) {
      expect(await env.pod.exportFiles({ taskId: task.id, files, to: place.project }).catch((e: unknown) => e)).toMatchObject({ code: 'export-source' });
    }
  });

  it('"remember this choice": only when ticked; then exports to that folder skip the confirmation until revoked', async () => {
    mkdirSync(join(place.project, 'remembered'), { recursive: true });
    const to = join(place.project, 'remembered');
    await env.pod.confirmExport({ token: (await plan({ files: ['report.txt'], to })).token });
    expect(env.pod.grants()).toEqual([]);
    // Not ticked: the next export still asks.
    const asked = await plan({ files: ['out/a.txt'], to });
    expect(asked.rememberAllowed).toBe(true);
    const record = await env.pod.confirmExport({ token: asked.token, remember: true });
    const [grant] = env.pod.grants();
    expect(grant).toMatchObject({ to, session: 'main' });
    expect(record.grantId).toBe(grant!.id);
    const auto = await env.pod.exportFiles({ taskId: task.id, files: ['out/sub/b.txt'], to });
    expect(auto).toMatchObject({ state: 'done', record: { via: 'remembered', grantId: grant!.id } });
    // Another folder is not covered by it.
    expect((await env.pod.exportFiles({ taskId: task.id, files: ['out/sub/b.txt'], to: 'elsewhere' })).state).toBe('needs-confirmation');
    env.pod.revokeGrant(grant!.id);
    expect(env.pod.grants()).toEqual([]);
    expect((await env.pod.exportFiles({ taskId: task.id, files: ['out/sub/b.txt'], to, onClash: 'overwrite' })).state).toBe('needs-confirmation');
  });

  it('the export log says what went where and when', async () => {
    const log = await env.pod.exports();
    expect(log.length).toBeGreaterThan(5);
    expect(log[0]).toMatchObject({ taskId: task.id, mode: 'copy', at: expect.any(Number), items: [expect.objectContaining({ source: join(task.dirs.work, 'out', 'a.txt') }), expect.anything()], undoneAt: expect.any(Number) });
  });

  it('exports, undos and returns are independent and nothing of them is an event or a message elsewhere', async () => {
    const history = (await env.kernel.get(sessions).get('main')).history.length;
    const exportsBefore = (await env.pod.exports()).length;
    const before = snapshot(place.project);
    const { message } = await env.pod.returnToConversation(task.id, { as: 'conclusion' });
    expect(message).toContain('Made report.txt');
    expect(snapshot(place.project)).toEqual(before);
    const file = await env.pod.returnToConversation(task.id, { as: 'file', file: 'report.txt' });
    expect(file.message).toBe(`[Isolation Pod task ${task.id}, file report.txt] report v1`);
    const status = await env.pod.returnToConversation(task.id, { as: 'status' });
    expect(status.message).toBe(`[Isolation Pod task ${task.id}, status] succeeded`);
    expect((await env.kernel.get(sessions).get('main')).history).toHaveLength(history + 3);
    expect(await env.pod.exports()).toHaveLength(exportsBefore);
    // The harness's own setup changes settings and binds 'main' to the project; the pod emits nothing.
    expect(bus.seen.filter((e) => e !== 'session/settings-changed' && e !== 'reach/main-directory-changed')).toEqual([]);
  });

  it('a return is kept short', async () => {
    const long = await env.pod.returnToConversation(task.id, { as: 'file', file: 'report.txt' });
    expect(long.message.length).toBeLessThanOrEqual(1_500);
    expect(await env.pod.returnToConversation(task.id, { as: 'file', file: '../../../home/.ssh/id_ed25519' }).catch((e: unknown) => e)).toMatchObject({ code: 'bad-input' });
  });
});

describe('clean-up', () => {
  it('cleans one task, all, or those past their age, and never anything outside the task directories', async () => {
    const outside = snapshot(place.outside);
    const project = snapshot(place.project);
    const stray = join(place.root, 'box', 'user-file.txt');
    writeFileSync(stray, 'not the pod’s\n');
    const extra = await env.pod.wait((await env.pod.start({ task: 'make files', subdir: 'b' })).id);
    expect(await env.pod.expire(Date.now())).toEqual({ cleaned: [], skipped: [], failed: [] });
    expect([...(await env.pod.expire(Date.now() + 8 * 24 * 3_600_000)).cleaned].sort()).toEqual([task.id, extra.id].sort());
    expect(existsSync(task.dirs.base)).toBe(false);
    expect(env.pod.show(task.id).cleanedAt).toEqual(expect.any(Number));
    expect(await env.pod.files(task.id)).toEqual([]);
    const again = await env.pod.wait((await env.pod.start({ task: 'make files' })).id);
    expect(await env.pod.clean({ id: again.id })).toEqual({ cleaned: [again.id], skipped: [], failed: [] });
    expect(await env.pod.clean({ all: true })).toEqual({ cleaned: [], skipped: [], failed: [] });
    expect(readFileSync(stray, 'utf8')).toBe('not the pod’s\n');
    expect(snapshot(place.outside)).toEqual(outside);
    expect(snapshot(place.project)).toEqual(project);
  });
});

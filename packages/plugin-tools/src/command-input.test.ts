// command_input: writing to a running background command's stdin (issue 16's terminals). A real
// kernel, the real Linux sandbox (bubblewrap) and real processes; asks answered by a test adapter.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { type Kernel, type OriginTurn, sessions, tools } from '@aalis/core';
import type { ApprovalRequestedEvent } from '@aalis/plugin-approval';
import { reachBindings } from '@aalis/plugin-reach';
import type { LinuxSandboxOptions } from '@aalis/sandbox-linux';
import { afterAll, describe, expect, it } from 'vitest';
import { toolsKernelOf } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-input-')));
const home = join(root, 'home');
const project = join(home, 'project');
const elsewhere = join(home, 'elsewhere');
mkdirSync(project, { recursive: true });
mkdirSync(elsewhere, { recursive: true });
const owner = { platform: 'chat', userId: 'owner' };
const stranger = { platform: 'chat', userId: 'stranger' };
const turnOf = (who = owner, session = 'main'): OriginTurn => ({ session: { id: session }, platform: 'chat', speaker: who, authorised: who, inbound: { id: `m${Date.now()}` }, category: 'own' });

const kernels: Kernel[] = [];
afterAll(async () => {
  for (const k of kernels) await k.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A started kernel bound to the project in the workspace tier; asks approved or left unanswered (then refused at the timeout). */
async function start(name: string, linux: LinuxSandboxOptions, answer: 'approve' | 'none' = 'none') {
  const asked: ApprovalRequestedEvent[] = [];
  const kernel = toolsKernelOf({
    dataDir: join(root, `data-${name}`),
    home,
    install: join(root, 'install'),
    approvalTimeoutMs: 1500,
    linuxSandbox: linux,
    onAsk: (event, desk) => {
      asked.push(event);
      if (answer === 'approve') void desk.reply({ code: event.code, decision: 'approve', by: owner });
    },
  });
  kernels.push(kernel);
  const status = await kernel.start();
  expect(status.filter((s) => s.state !== 'running')).toEqual([]);
  kernel.get(reachBindings).bind('main', { home: project });
  await kernel.get(sessions).change('main', { tier: 'workspace', boundary: 'ask' });
  const call = (tool: string, params: unknown, turn = turnOf()) => kernel.get(tools).dispatch<Record<string, unknown>>({ tool, params, turn });
  const finished = async (jobId: string) => {
    for (;;) {
      const r = await call('command_status', { jobId });
      if (!r.ok || r.value.state === 'done') return r;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const begin = async (command: string) => {
    const started = await call('run_command_background', { command, interactive: true });
    expect(started).toMatchObject({ ok: true, value: { jobId: expect.any(String) } });
    return String(started.ok ? started.value.jobId : '');
  };
  return { kernel, asked, call, finished, begin };
}

describe('command_input', { timeout: 120_000 }, () => {
  it('answers a reading command line by line, then EOF; only its starter, in its conversation, may write; an ended command says so', async () => {
    const k = await start('lines', {});
    const jobId = await k.begin('read a; echo "got:$a"; read b; echo "got:$b"; cat');
    expect(await k.call('command_input', { jobId, text: 'one\n' })).toEqual({ ok: true, value: { written: 4, pending: expect.any(Number), eof: false } });
    // another person in the conversation: no local effect (not told whether it exists); the owner in another conversation: no such command for them
    const other = await k.call('command_input', { jobId, text: 'theirs\n' }, turnOf(stranger));
    expect(other).toMatchObject({ ok: false, kind: 'denied', message: expect.stringContaining('rule: no-local-effect') });
    const otherPlace = await k.call('command_input', { jobId, text: 'there\n' }, turnOf(owner, 'another'));
    expect(otherPlace).toMatchObject({ ok: false, message: expect.stringContaining(`no background command '${jobId}' of yours`) });
    expect(await k.call('command_status', { jobId })).toEqual({ ok: true, value: { state: 'running' } });
    expect(await k.call('command_input', { jobId, text: 'two\nrest', eof: true })).toMatchObject({ ok: true, value: { written: 8, eof: true } });
    expect(await k.finished(jobId)).toMatchObject({ ok: true, value: { state: 'done', outcome: { ok: true, value: { stdout: 'got:one\ngot:two\nrest', exitCode: 0, runs: 1 } } } });
    const late = await k.call('command_input', { jobId, text: 'late\n' });
    expect(late).toMatchObject({ ok: false, message: expect.stringContaining('has ended') });
    // neither text nor eof: refused by the params
    expect(await k.call('command_input', { jobId })).toMatchObject({ ok: false });
  });

  it('a command started without interactive: true has no input to write; one stopped with input pending says it ended', async () => {
    const k = await start('plain', {});
    const started = await k.call('run_command_background', { command: 'exec sleep 57.5' });
    const plain = String(started.ok ? started.value.jobId : '');
    expect(await k.call('command_input', { jobId: plain, text: 'x\n' })).toMatchObject({ ok: false, message: expect.stringContaining('without interactive: true') });
    await k.call('command_kill', { jobId: plain });
    const reads = await k.begin('exec sleep 58.5'); // never reads
    expect(await k.call('command_input', { jobId: reads, text: 'pending\n' })).toMatchObject({ ok: true });
    expect(await k.call('command_kill', { jobId: reads })).toMatchObject({ ok: true, value: { state: 'done', closed: expect.stringContaining('stopped on request') } });
    expect(await k.call('command_input', { jobId: reads, text: 'more\n' })).toMatchObject({ ok: false, message: expect.stringContaining('has ended') });
  });

  it('a command closed by a tier move takes no more input at once, before its kill has landed, and never reads any', async () => {
    const k = await start('closed', {});
    const jobId = await k.begin('sleep 1.25; read a; echo "got:$a"; exec sleep 59.5');
    // to the host: the command started in the sandbox is closed; the write comes at once after
    await k.kernel.get(sessions).change('main', { tier: 'full' });
    const late = await k.call('command_input', { jobId, text: 'after the close\n' });
    expect(late).toMatchObject({ ok: false, message: expect.stringContaining("moved from 'workspace' (sandbox) to 'full' (host)") });
    const done = await k.finished(jobId);
    expect(done).toMatchObject({ ok: true, value: { state: 'done', closed: expect.stringContaining('to \'full\' (host)') } });
    expect(JSON.stringify(done)).not.toContain('got:');
  });

  it('read-only-first: a refused write of a command fed live input is committed from where the sandbox kept it once approved, and the command is not run again', async () => {
    const k = await start('kept', { hostModel: 'overlay' }, 'approve');
    const out = join(project, 'lefthook.yml'); // a landing: refused, kept in the overlay's upper layer, asked for
    const jobId = await k.begin(`read a; echo "$a" >> ran.log; echo "$a" > lefthook.yml`);
    await k.call('command_input', { jobId, text: 'live-1\n', eof: true });
    const done = await k.finished(jobId);
    expect(done).toMatchObject({ ok: true, value: { state: 'done', outcome: { ok: true, value: { runs: 1, grantedWrites: [out], refusedWrites: [] } } } });
    expect(k.asked.map((e) => e.subject)).toEqual([{ kind: 'write-path', path: out, rule: 'landing' }]);
    expect(readFileSync(out, 'utf8')).toBe('live-1\n');
    expect(readFileSync(join(project, 'ran.log'), 'utf8')).toBe('live-1\n'); // ran once
  });

  it('read-only-first: where the sandbox did not keep the write, the approved write stays refused (live-input) and the command is not run again', async () => {
    rmSync(join(project, 'ran.log'), { force: true });
    const k = await start('look', { hostModel: 'look' }, 'approve');
    const out = join(elsewhere, 'look.txt');
    const jobId = await k.begin(`read a; echo "$a" >> ran.log; echo "$a" > ${out}`);
    await k.call('command_input', { jobId, text: 'live-2\n', eof: true });
    const done = await k.finished(jobId);
    expect(done).toMatchObject({
      ok: true,
      value: { state: 'done', outcome: { ok: true, value: { runs: 1, grantedWrites: [], refusedWrites: [{ path: out, rule: 'live-input' }], note: expect.stringContaining('fed live input') } } },
    });
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(join(project, 'ran.log'), 'utf8')).toBe('live-2\n'); // ran once
  });
});

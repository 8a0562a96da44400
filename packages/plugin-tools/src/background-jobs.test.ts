// Background commands (terminals) keep the policy they started with, and are closed when the
// conversation's tier moves between the sandbox and the host, or its main directory moves. A real kernel and the real Linux
// sandbox (bubblewrap): the command is really killed, its output so far kept.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_SCRATCH } from '../../../test/scratch.js';
import { type Kernel, type OriginTurn, sessions, tools } from '@aalis/core';
import { reachBindings } from '@aalis/plugin-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolsKernelOf } from './tools-kernel.testing.js';

const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-jobs-')));
const home = join(root, 'home');
const project = join(home, 'project');
const elsewhere = join(home, 'elsewhere');
mkdirSync(project, { recursive: true });
mkdirSync(elsewhere, { recursive: true });
const owner = { platform: 'chat', userId: 'owner' };
const turn = (): OriginTurn => ({ session: { id: 'main' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: `m${Date.now()}` }, category: 'own' });
const stranger = { platform: 'chat', userId: 'stranger' };
const strangerTurn = (): OriginTurn => ({ ...turn(), speaker: stranger, authorised: stranger });

let kernel: Kernel;
beforeAll(async () => {
  kernel = toolsKernelOf({ dataDir: join(root, 'data'), home, install: join(root, 'install'), approvalTimeoutMs: 1500, linuxSandbox: true, onAsk: () => {} });
  const status = await kernel.start();
  expect(status.filter((s) => s.state !== 'running')).toEqual([]);
  kernel.get(reachBindings).bind('main', { home: project });
  await kernel.get(sessions).change('main', { tier: 'workspace', boundary: 'ask' });
});
afterAll(async () => {
  await kernel?.stop();
  rmSync(root, { recursive: true, force: true });
});

const call = (tool: string, params: unknown) => kernel.get(tools).dispatch<Record<string, unknown>>({ tool, params, turn: turn() });

describe('background commands', () => {
  it("refuse status, input and kill (rule no-local-effect) to a turn that acts for someone else, even the owner's own turn with another person in it (F5)", async () => {
    const started = await call('run_command_background', { command: 'echo secret-output; exec sleep 54.5', interactive: true });
    const jobId = String(started.ok ? started.value.jobId : '');
    await until(() => running('sleep 54.5'));
    const mixed = (): OriginTurn => ({ ...turn(), participants: [stranger] });
    for (const [tool, params] of [
      ['command_status', { jobId }],
      ['command_input', { jobId, text: 'x\n' }],
      ['command_kill', { jobId }],
    ] as const) {
      for (const who of [mixed(), strangerTurn()]) {
        const outcome = await kernel.get(tools).dispatch({ tool, params, turn: who });
        expect(outcome).toMatchObject({ ok: false, kind: 'denied', message: expect.stringContaining('rule: no-local-effect') });
        expect(JSON.stringify(outcome)).not.toContain('secret-output');
      }
    }
    expect(running('sleep 54.5')).toBe(true);
    expect(await call('command_kill', { jobId })).toMatchObject({ ok: true, value: { state: 'done', outcome: { ok: true, value: { stdout: 'secret-output\n' } } } });
  });

  it('keep running across a change within the sandboxed tiers, and are closed (output kept, reason given) when the tier moves to the host', async () => {
    const started = await call('run_command_background', { command: 'echo started; exec sleep 53.5' });
    expect(started).toMatchObject({ ok: true, value: { jobId: expect.any(String) } });
    const jobId = String(started.ok ? started.value.jobId : '');
    await until(() => running('sleep 53.5'));
    // workspace -> readonly: both in the sandbox, the command keeps running.
    await kernel.get(sessions).change('main', { tier: 'readonly' });
    await new Promise((r) => setTimeout(r, 300)); // a close would have had time to land; on a loaded machine the check only gets weaker, never fails
    expect(await call('command_status', { jobId })).toEqual({ ok: true, value: { state: 'running' } });
    // readonly -> full: the host. The command started in the sandbox is closed.
    await kernel.get(sessions).change('main', { tier: 'full' });
    let status: Record<string, unknown> = {};
    await until(async () => {
      status = ((await call('command_status', { jobId })) as { value: Record<string, unknown> }).value;
      return status.state === 'done';
    });
    expect(status).toMatchObject({ state: 'done', closed: expect.stringContaining("moved from 'readonly' (sandbox) to 'full' (host)"), outcome: { ok: true, value: { stdout: 'started\n' } } });
    expect(running('sleep 53.5')).toBe(false);
  });

  it('are closed (output kept, reason given) when the conversation is bound to another main directory, and only then', async () => {
    await kernel.get(sessions).change('main', { tier: 'workspace' });
    const started = await call('run_command_background', { command: 'echo started; pwd; exec sleep 54.5' });
    const jobId = String(started.ok ? started.value.jobId : '');
    expect(jobId).not.toBe('');
    await until(() => running('sleep 54.5'));
    const bindings = kernel.get(reachBindings);
    // The same directory again, and another person's own binding: not this command's place.
    bindings.bind('main', { home: project });
    bindings.bind('main', { home: elsewhere, person: 'chat:somebody-else' });
    await new Promise((r) => setTimeout(r, 300)); // as above: time for a wrong close to land
    expect(await call('command_status', { jobId })).toEqual({ ok: true, value: { state: 'running' } });
    // The conversation's own main directory moves: the command started in the old one is closed.
    bindings.bind('main', { home: elsewhere });
    let status: Record<string, unknown> = {};
    await until(async () => {
      status = ((await call('command_status', { jobId })) as { value: Record<string, unknown> }).value;
      return status.state === 'done';
    });
    expect(status).toMatchObject({
      state: 'done',
      closed: expect.stringContaining(`main directory moved from '${project}' to '${elsewhere}'`),
      outcome: { ok: true, value: { stdout: `started\n${project}\n` } },
    });
    expect(running('sleep 54.5')).toBe(false);
  });

  it("command_kill stops one's own command (output kept, why in its status); nobody else's call sees or stops it", async () => {
    await kernel.get(sessions).change('main', { tier: 'workspace' });
    const started = await call('run_command_background', { command: 'echo started; exec sleep 55.5' });
    const jobId = String(started.ok ? started.value.jobId : '');
    expect(jobId).not.toBe('');
    await until(() => running('sleep 55.5'));
    // Another person in the same conversation: refused as a call with no local effect (not told whether it exists);
    // the owner from another conversation: no such command for them.
    const other = await kernel.get(tools).dispatch({ tool: 'command_kill', params: { jobId }, turn: strangerTurn() });
    expect(other).toMatchObject({ ok: false, kind: 'denied', message: expect.stringContaining('rule: no-local-effect') });
    const elsewhereTurn = { ...turn(), session: { id: 'another' } };
    expect(await kernel.get(tools).dispatch({ tool: 'command_status', params: { jobId }, turn: elsewhereTurn })).toMatchObject({
      ok: false,
      message: expect.stringContaining(`no background command '${jobId}' of yours`),
    });
    expect(running('sleep 55.5')).toBe(true);
    // Its own person stops it: the answer is its final status, output so far kept.
    const killed = await call('command_kill', { jobId });
    expect(killed).toMatchObject({ ok: true, value: { state: 'done', closed: expect.stringContaining('stopped on request'), outcome: { ok: true, value: { stdout: 'started\n' } } } });
    expect(running('sleep 55.5')).toBe(false);
    expect(await call('command_status', { jobId })).toEqual(killed);
  });
});

/**
 * Whether a process whose whole command line is `command` runs. Anchored: the shell's own
 * `sh -c '…; exec sleep …'` line contains the text too, and matching it would say "running"
 * before the shell printed anything (a kill then would leave no output to keep).
 */
function running(command: string): boolean {
  try {
    execFileSync('pgrep', ['-f', `^${command}$`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

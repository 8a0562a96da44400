// command_input through a real daemon (`aalis serve`) and its HTTP tool-call API: a background
// command started with interactive: true in the real Linux sandbox reads what is written to it,
// its status shows the reply; another person, and another conversation, are refused.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const dir = deploymentDir({ owners: { chat: ['alice'] } });
let daemon: ServeProcess | undefined;
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('command_input over POST /api/tools/call', () => {
  it('answers a prompt of a running command; command_status shows the reply; nobody else may write', { timeout: 180_000 }, async () => {
    daemon = await startServe(dir);
    const d = daemon;
    const call = (tool: string, params: unknown, turn = ownerTurn('chat-input')) => d.api('POST', '/api/tools/call', { tool, params, turn });
    const started = await call('run_command_background', { command: 'printf "name? "; read name; echo "hello $name"; read more; echo "and $more"', interactive: true });
    expect(started.body, d.stderr()).toMatchObject({ ok: true, value: { jobId: expect.any(String) } });
    const { jobId } = started.body.value;

    expect((await call('command_input', { jobId, text: 'Ada\n' })).body).toEqual({ ok: true, value: { written: 4, pending: expect.any(Number), eof: false } });
    // bob in the same conversation: no local effect (not told whether it exists); alice in another: no such command for her
    const bob = await call('command_input', { jobId, text: 'Mallory\n' }, ownerTurn('chat-input', 'bob'));
    expect(bob.body).toMatchObject({ ok: false, message: expect.stringContaining('rule: no-local-effect') });
    const elsewhere = await call('command_input', { jobId, text: 'Eve\n' }, ownerTurn('chat-elsewhere'));
    expect(elsewhere.body).toMatchObject({ ok: false, message: expect.stringContaining(`no background command '${jobId}' of yours`) });
    expect((await call('command_status', { jobId })).body).toEqual({ ok: true, value: { state: 'running' } });

    expect((await call('command_input', { jobId, text: 'tea\n', eof: true })).body).toMatchObject({ ok: true, value: { eof: true } });
    let status = (await call('command_status', { jobId })).body;
    while (status.ok && status.value.state === 'running') {
      await new Promise((r) => setTimeout(r, 100));
      status = (await call('command_status', { jobId })).body;
    }
    expect(status, `${JSON.stringify(status)}\n${d.stderr()}`).toMatchObject({ ok: true, value: { state: 'done', outcome: { ok: true, value: { where: 'sandbox', stdout: 'name? hello Ada\nand tea\n', exitCode: 0 } } } });
    expect((await call('command_input', { jobId, text: 'late\n' })).body).toMatchObject({ ok: false, message: expect.stringContaining('has ended') });
  });
});

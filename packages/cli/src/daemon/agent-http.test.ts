// The agent through the real daemon (`aalis serve` as a process): messages over POST /api/turns,
// the reply and every tool call on the SSE stream, an ask answered over the API, the history over
// GET …/messages, one turn at a time, stop, and a model answering garbage. The model is the only
// stand-in: @aalis/model's scripted chat-completions server, streaming (the agent asks for it).
import { readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScriptedModel, startScriptedModel } from '@aalis/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessagesAnswerSchema, StopAnswerSchema, TurnAnswerSchema, TurnEndedEventSchema } from './payloads.js';
import { deploymentDir, type Json, ownerTurn, type ServeProcess, startServe, subscribe } from './serve-process.testing.js';

let dir: string;
let workspace: string;
let outside: string;
let model: ScriptedModel;
let daemon: ServeProcess;

beforeAll(async () => {
  dir = deploymentDir();
  workspace = join(realpathSync(dir), 'data', 'workspace');
  outside = `${realpathSync(dir)}-outside`;
  model = await startScriptedModel([
    {
      match: 'tidy up',
      steps: [
        { call: 'write_file', args: { path: join(workspace, 'summary.txt'), content: 'summary\n' } },
        { call: 'write_file', args: { path: join(outside, 'copy.txt'), content: 'copy\n' } },
        { say: 'Wrote the summary and the copy.' },
      ],
    },
    { match: 'sleep a while', steps: [{ call: 'run_command', args: { command: 'sleep 41.5' } }, { say: 'slept' }] },
    { match: 'garbage', steps: [{ status: 200, body: '{"not":"a completion"}' }] },
    // The reviewer's script comes before the agent's: its prompt quotes the conversation.
    { match: 'reviewed.txt', steps: [{ call: 'verdict', args: { decision: 'deny', reason: 'not needed for this task; keep it in the workspace' } }] },
    {
      match: 'copy it out',
      steps: [
        { call: 'write_file', args: { path: join(outside, 'reviewed.txt'), content: 'x' } },
        { call: 'write_file', args: { path: join(workspace, 'kept-inside.txt'), content: 'inside\n' } },
        { say: 'kept it inside' },
      ],
    },
    { match: 'make a plan', steps: [{ call: 'submit_plan', args: { name: 'tidy', plan: '1. read\n2. write the summary' } }, { say: 'now executing' }] },
    { match: 'stranger asks', steps: [{ call: 'write_file', args: { path: join(workspace, 'stranger.txt'), content: 'x' } }, { say: 'could not' }] },
  ]);
  const config = { owners: { chat: ['alice'] }, approval: { timeoutMs: 60_000 }, model: { baseURL: model.baseURL, model: 'scripted', requestTimeoutMs: 10_000, apiKeyEnv: 'AALIS_TEST_MODEL_KEY' } };
  writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify(config));
  daemon = await startServe(dir, [], { AALIS_TEST_MODEL_KEY: 'sk-from-the-environment' });
});
afterAll(async () => {
  await daemon?.stop();
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const forTurn = (turnId: string) => (d: Json) => d.turnId === turnId;

describe('aalis serve: the agent', () => {
  it('answers a message: streams the reply and each tool call, asks for the outside write, which the owner approves over the API', async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-agent');
    try {
      const posted = await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-agent'), message: 'please tidy up' });
      expect(posted.status).toBe(200);
      const { turnId } = TurnAnswerSchema.strict().parse(posted.body);
      expect(turnId).toEqual(expect.any(String));
      const asked = await stream.next('approval/requested');
      expect(asked.subject).toMatchObject({ kind: 'write-path', path: join(outside, 'copy.txt') });
      const reply = await daemon.api('POST', '/api/approvals/reply', { code: asked.code, decision: 'approve' });
      expect(reply.status).toBe(200);
      const ended = TurnEndedEventSchema.parse(await stream.next('turn/ended', forTurn(turnId as string)));
      expect(ended.state).toBe('answered');
      const names = stream.events.filter((e) => e.data?.turnId === turnId).map((e) => e.name);
      expect(names.slice(0, 2)).toEqual(['message/created', 'turn/started']); // the person's message first
      expect(names.filter((n) => n === 'tool/ended')).toHaveLength(2);
      expect(names).toContain('message/delta');
      const outcomes = stream.events.filter((e) => e.name === 'tool/ended' && e.data.turnId === turnId).map((e) => e.data.outcome.ok);
      expect(outcomes).toEqual([true, true]);
      expect(readFileSync(join(workspace, 'summary.txt'), 'utf8')).toBe('summary\n');
      expect(readFileSync(join(outside, 'copy.txt'), 'utf8')).toBe('copy\n');
      const history = MessagesAnswerSchema.parse((await daemon.api('GET', '/api/sessions/chat-agent/messages')).body);
      expect(history.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      expect(history.messages.at(-1)?.content).toBe('Wrote the summary and the copy.');
      expect(history.running).toBeUndefined();
      // The key came from the variable apiKeyEnv names, never from the config file.
      expect(model.requests.at(-1)?.authorization).toBe('Bearer sk-from-the-environment');
    } finally {
      stream.close();
    }
  });

  it('refuses a second message and a run-mode switch while a turn runs (409), and POST …/stop ends the turn and its command', async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-busy');
    try {
      const { turnId } = (await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-busy'), message: 'sleep a while' })).body;
      await stream.next('tool/started', forTurn(turnId));
      const second = await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-busy'), message: 'are you there?' });
      expect(second.status).toBe(409);
      expect(second.body.error).toEqual({ code: 'turn-running', message: expect.stringContaining('refused, not queued'), fix: expect.stringContaining('/stop') });
      const mode = await daemon.api('POST', '/api/sessions/chat-busy/settings', { runMode: 'plan' });
      expect(mode.status).toBe(409);
      expect(mode.body.error.code).toBe('turn-running');
      expect((await daemon.api('GET', '/api/sessions/chat-busy/settings')).body.settings.runMode).toBe('execute');
      const running = (await daemon.api('GET', '/api/sessions/chat-busy/messages')).body;
      expect(running.running.turnId).toBe(turnId);
      expect(running.messages.filter((m: Json) => m.role === 'user')).toHaveLength(1);
      const stopped = await daemon.api('POST', '/api/sessions/chat-busy/stop');
      expect(StopAnswerSchema.parse(stopped.body)).toEqual({ session: 'chat-busy', stopped: true, turnId });
      expect((await stream.next('turn/ended', forTurn(turnId))).state).toBe('stopped');
      expect(processesWith('sleep 41.5')).toEqual([]);
      // Idle again: the mode switches, and stopping again stops nothing.
      expect((await daemon.api('POST', '/api/sessions/chat-busy/settings', { runMode: 'plan' })).status).toBe(200);
      expect((await daemon.api('POST', '/api/sessions/chat-busy/stop')).body).toEqual({ session: 'chat-busy', stopped: false });
    } finally {
      stream.close();
    }
  });

  it('a model answering something that is not a chat completion: a clear error in the conversation, nothing run', async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-garbage');
    try {
      const { turnId } = (await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-garbage'), message: 'garbage' })).body;
      const ended = await stream.next('turn/ended', forTurn(turnId));
      expect(ended).toMatchObject({ state: 'failed', error: { code: 'model-bad-reply', message: expect.stringContaining('not a chat completion') } });
      expect(stream.events.some((e) => e.name === 'tool/started' && e.data.turnId === turnId)).toBe(false);
      const { messages } = (await daemon.api('GET', '/api/sessions/chat-garbage/messages')).body;
      expect(messages.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining('Check that model.baseURL') });
    } finally {
      stream.close();
    }
  });

  it('plan: submit_plan asks the owner with the plan; approved over the API, the conversation is in execute with its earlier settings back', async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-plan');
    try {
      await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-plan') });
      // A new conversation starts from alice's last used settings, whatever earlier tests left: set them all.
      await daemon.api('POST', '/api/sessions/chat-plan/settings', { runMode: 'execute' });
      expect((await daemon.api('POST', '/api/sessions/chat-plan/settings', { tier: 'full', boundary: 'deny' })).body.settings).toMatchObject({ tier: 'full', boundary: 'deny' });
      const planned = await daemon.api('POST', '/api/sessions/chat-plan/settings', { runMode: 'plan' });
      expect(planned.body.settings).toMatchObject({ runMode: 'plan', tier: 'readonly' });
      const { turnId } = (await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-plan'), message: 'make a plan' })).body;
      const asked = await stream.next('approval/requested');
      expect(asked.subject).toEqual({ kind: 'plan', summary: '1. read\n2. write the summary', rule: 'plan' });
      expect(readFileSync(join(workspace, '.aalis', 'plan', 'tidy.md'), 'utf8')).toBe('1. read\n2. write the summary\n');
      expect((await daemon.api('POST', '/api/approvals/reply', { code: asked.code, decision: 'approve' })).status).toBe(200);
      expect((await stream.next('turn/ended', forTurn(turnId))).state).toBe('answered');
      const settings = (await daemon.api('GET', '/api/sessions/chat-plan/settings')).body.settings;
      expect(settings).toEqual({ tier: 'full', boundary: 'deny', approver: 'human', runMode: 'execute' });
      // The approval's switch, announced on the stream (an earlier leave-plan of this test restored other settings).
      expect(await stream.next('session/settings-changed', (d) => d.previous.runMode === 'plan' && d.next.runMode === 'execute' && d.next.tier === 'full', 10_000)).toMatchObject({ sessionId: 'chat-plan' });
    } finally {
      stream.close();
    }
  });

  it('the reviewer denies an outside write with a reason that reaches the agent, which keeps the file inside; audited with the reason', async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-reviewed');
    try {
      await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-reviewed') });
      await daemon.api('POST', '/api/sessions/chat-reviewed/settings', { runMode: 'execute' });
      await daemon.api('POST', '/api/sessions/chat-reviewed/settings', { approver: 'reviewer', tier: 'workspace', boundary: 'ask' });
      const { turnId } = (await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-reviewed'), message: 'copy it out' })).body;
      expect((await stream.next('turn/ended', forTurn(turnId))).state).toBe('answered');
      const first = await stream.next('tool/ended', forTurn(turnId));
      expect(first.outcome).toMatchObject({ ok: false, message: expect.stringContaining('keep it in the workspace') });
      expect(readFileSync(join(workspace, 'kept-inside.txt'), 'utf8')).toBe('inside\n');
      expect(() => readFileSync(join(outside, 'reviewed.txt'))).toThrow();
      const audit = (await daemon.api('GET', '/api/audit?session=chat-reviewed')).body.records;
      expect(audit.filter((r: Json) => r.event === 'resolved')).toMatchObject([{ via: 'reviewer', outcome: 'rejected', reason: 'not needed for this task; keep it in the workspace' }]);
    } finally {
      stream.close();
    }
  });

  it("a non-owner's message is answered, but its write has no effect", async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-stranger');
    try {
      const { turnId, principal } = (await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-stranger', 'mallory'), message: 'the stranger asks' })).body;
      expect(principal).toBe('other');
      expect((await stream.next('turn/ended', forTurn(turnId))).state).toBe('answered');
      expect((await stream.next('tool/ended', forTurn(turnId))).outcome.ok).toBe(false);
      expect(() => readFileSync(join(workspace, 'stranger.txt'))).toThrow();
      const { messages } = (await daemon.api('GET', '/api/sessions/chat-stranger/messages')).body;
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'could not' });
    } finally {
      stream.close();
    }
  });

  it("a settings change an adapter makes for someone who is not an owner is 403 and changes nothing; an owner's `by` applies", async () => {
    await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-by') });
    const before = (await daemon.api('GET', '/api/sessions/chat-by/settings')).body.settings;
    const refused = await daemon.api('POST', '/api/sessions/chat-by/settings', { approver: 'none', by: { platform: 'chat', userId: 'mallory' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({ code: 'not-owner', message: expect.stringContaining('chat:mallory is not an owner'), fix: expect.stringContaining('owner') });
    expect((await daemon.api('GET', '/api/sessions/chat-by/settings')).body.settings).toEqual(before);
    const applied = await daemon.api('POST', '/api/sessions/chat-by/settings', { approver: 'none', by: { platform: 'chat', userId: 'alice' } });
    expect(applied.status).toBe(200);
    expect(applied.body.settings.approver).toBe('none');
  });

  it('answers 404 for the messages or stop of a conversation that never began', async () => {
    for (const [method, path] of [['GET', '/api/sessions/nope/messages'], ['POST', '/api/sessions/nope/stop']] as const) {
      const res = await daemon.api(method, path);
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain("no conversation 'nope'");
    }
  });
});

function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(marker)) found.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

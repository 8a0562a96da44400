import { authorityPlugin, createKernel, defineTool, sessionsPlugin, tools, toolsPlugin } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OWNER, STRANGER, removeTempDirs, startKernel, tempDir, turnOf, writeAsk } from '../test/harness.js';
import { approvalPlugin } from './plugin.js';

afterAll(removeTempDirs);

describe('asking a person', () => {
  it('shows the ask with a code and resolves to what the owner answered, audited', async () => {
    const h = await startKernel();
    const turn = turnOf(OWNER, 'conv-1');
    const asked = h.gate.ask(writeAsk('/home/owner/notes.txt', { turn }));
    const shown = await h.nextRequest();
    expect(shown).toMatchObject({
      session: { id: 'conv-1' },
      platform: 'chat',
      speaker: OWNER,
      summary: 'write /home/owner/notes.txt',
      subject: { kind: 'write-path', path: '/home/owner/notes.txt', rule: 'boundary' },
      rememberable: true,
      approver: 'human',
    });
    expect(shown.code).toMatch(/^[2-9A-Z]{6}$/);
    expect(shown.expiresAt - shown.createdAt).toBeGreaterThanOrEqual(5 * 60 * 1000);
    expect(h.desk.pending('conv-1').map((p) => p.code)).toEqual([shown.code]);
    // whom the asking call acts for: an owner tells their own agent's asks from another person's
    expect(h.desk.pending('conv-1')[0]?.raisedBy).toEqual(OWNER);

    const reply = await h.desk.reply({ code: shown.code.toLowerCase(), decision: 'approve', by: OWNER });
    expect(reply).toMatchObject({ ok: true, id: shown.id, outcome: { outcome: 'approved', by: OWNER, remembered: false } });
    expect(await asked).toEqual({ outcome: 'approved', by: OWNER, remembered: false });
    expect(h.resolved).toEqual([{ id: shown.id, code: shown.code, session: { id: 'conv-1' }, outcome: await asked, via: 'human' }]);
    expect(h.desk.pending()).toEqual([]);

    const audit = await h.audit();
    expect(audit.map((r) => r.event)).toEqual(['requested', 'resolved']);
    expect(audit[0]).toMatchObject({ event: 'requested', id: shown.id, session: 'conv-1', turn: { speaker: OWNER, inbound: turn.inbound }, rule: 'boundary', approver: 'human' });
    expect(audit[1]).toMatchObject({ event: 'resolved', id: shown.id, via: 'human', answeredBy: OWNER, outcome: 'approved', remembered: false });
    await h.kernel.stop();
  });

  it('shows the summary with bidi, format and separator characters escaped, in the event and the pending list (F6)', async () => {
    const h = await startKernel();
    const asked = h.gate.ask(writeAsk('/w/\u2066#\u202etxt.seton tac\u2069\u2028x'));
    const shown = await h.nextRequest();
    const escaped = 'write /w/\\u2066#\\u202etxt.seton tac\\u2069\\u2028x';
    expect(shown.summary).toBe(escaped);
    expect(h.desk.pending().map((p) => p.summary)).toEqual([escaped]);
    await h.desk.reply({ code: shown.code, decision: 'reject', by: OWNER });
    await asked;
    await h.kernel.stop();
  });

  it('passes the reason of a rejection back to the asker', async () => {
    const h = await startKernel();
    const asked = h.gate.ask(writeAsk('/etc/hosts'));
    const { code } = await h.nextRequest();
    expect(await h.desk.reply({ code, decision: 'reject', by: OWNER, reason: 'use the project copy' })).toMatchObject({ ok: true });
    expect(await asked).toEqual({ outcome: 'rejected', by: OWNER, reason: 'use the project copy' });
    await h.kernel.stop();
  });

  it('answers exactly once: a second reply, an unknown code and garbage get a clear refusal, never a throw', async () => {
    const h = await startKernel();
    const asked = h.gate.ask(writeAsk('/tmp/x'));
    const { code, id } = await h.nextRequest();
    const first = await h.desk.reply({ code, decision: 'approve', by: OWNER });
    const second = await h.desk.reply({ code, decision: 'reject', by: OWNER });
    expect(first.ok).toBe(true);
    expect(second).toEqual({ ok: false, refused: 'already-answered', id, message: `approval ${code} was already answered: approved by a reply. This reply changed nothing.` });
    expect(await asked).toMatchObject({ outcome: 'approved' });

    const unknown = await h.desk.reply({ code: 'ZZZZZZ', decision: 'approve', by: OWNER });
    expect(unknown).toMatchObject({ ok: false, refused: 'unknown-code' });
    expect(unknown.message).toMatch(/no approval is waiting with code ZZZZZZ/);
    for (const garbage of [null, 42, { code }, { code, decision: 'maybe', by: OWNER }, { code, decision: 'approve', by: { platform: '' } }, { code: 'O0O0', decision: 'approve', by: OWNER }]) {
      const result = await h.desk.reply(garbage);
      expect(result).toMatchObject({ ok: false, refused: 'invalid' });
      expect(result.message.length).toBeGreaterThan(10);
    }
    await h.kernel.stop();
  });

  it('refuses a non-owner, keeps the ask open for the owner, and audits the refusal', async () => {
    const h = await startKernel();
    const asked = h.gate.ask(writeAsk('/srv/site/index.html'));
    const { code, id } = await h.nextRequest();
    for (const decision of ['approve', 'reject'] as const) {
      const refused = await h.desk.reply({ code, decision, by: STRANGER });
      expect(refused).toMatchObject({ ok: false, refused: 'not-owner', id });
      expect(refused.message).toMatch(/only the owner may answer approvals; chat:stranger is not an owner/);
    }
    // Same user id on another platform is somebody else.
    expect(await h.desk.reply({ code, decision: 'approve', by: { platform: 'mail', userId: 'owner' } })).toMatchObject({ refused: 'not-owner' });
    expect(h.desk.pending().map((p) => p.id)).toEqual([id]);
    expect(h.desk.pending()[0]?.raisedBy).toEqual(OWNER);
    expect(await h.desk.reply({ code, decision: 'approve', by: OWNER })).toMatchObject({ ok: true });
    expect(await asked).toMatchObject({ outcome: 'approved', by: OWNER });
    const refusals = (await h.audit()).filter((r) => r.event === 'reply-refused');
    expect(refusals).toHaveLength(3);
    expect(refusals[0]).toMatchObject({ id, code, by: STRANGER, refused: 'not-owner' });
    await h.kernel.stop();
  });

  it('expires an unanswered ask, and a late reply is told so', async () => {
    const h = await startKernel({ config: { timeoutMs: 40 } });
    const outcome = await h.gate.ask(writeAsk('/tmp/late'));
    expect(outcome.outcome).toBe('expired');
    if (outcome.outcome === 'expired') expect(outcome.afterMs).toBeGreaterThanOrEqual(35);
    const [shown] = h.requested;
    const late = await h.desk.reply({ code: shown!.code, decision: 'approve', by: OWNER });
    expect(late).toMatchObject({ ok: false, refused: 'already-answered' });
    expect(late.message).toMatch(/expired because nobody answered in time/);
    expect(h.resolved.at(-1)).toMatchObject({ via: 'timeout', outcome: { outcome: 'expired' } });
    expect((await h.audit()).at(-1)).toMatchObject({ event: 'resolved', via: 'timeout', outcome: 'expired', answeredBy: null });
    await h.kernel.stop();
  });

  it('rejects a malformed ask without showing it', async () => {
    const h = await startKernel();
    const outcome = await h.gate.ask({ turn: turnOf(OWNER), subject: { kind: 'write-path', path: '', rule: 'boundary' }, summary: ' ', rememberable: true });
    expect(outcome).toMatchObject({ outcome: 'rejected', by: 'policy' });
    if (outcome.outcome === 'rejected') expect(outcome.reason).toMatch(/malformed \(subject\.path: .*summary: an ask needs a one-line summary.*nothing was approved/);
    expect(h.requested).toEqual([]);
    await h.kernel.stop();
  });
});

describe('the plugin', () => {
  it('fails alone, with the field named, on a bad config; and without a data directory', async () => {
    const bad = createKernel({ dataDir: await tempDir() })
      .use(sessionsPlugin)
      .use(authorityPlugin)
      .use(approvalPlugin, { timeoutMs: 'soon' } as never);
    const status = await bad.start();
    expect(status.find((s) => s.name === 'approval')).toMatchObject({ state: 'failed', cause: expect.stringMatching(/field 'timeoutMs'/) });

    const noDir = createKernel().use(sessionsPlugin).use(authorityPlugin).use(approvalPlugin);
    const noDirStatus = await noDir.start();
    expect(noDirStatus.find((s) => s.name === 'approval')).toMatchObject({ state: 'failed', cause: expect.stringMatching(/needs the kernel to have a data directory/) });
  });

  it('is the gate of core\'s dispatcher: a high-risk tool runs only after the owner approves', async () => {
    let runs = 0;
    const h = await startKernel({ extra: [toolsPlugin] });
    h.kernel.get(tools).register(
      defineTool({
        name: 'tool_manager',
        description: 'changes tools',
        params: z.object({ action: z.string() }),
        risk: 'high',
        handler: () => ++runs,
      }),
    );
    const dispatcher = h.kernel.get(tools);
    const rejectedCall = dispatcher.dispatch({ tool: 'tool_manager', params: { action: 'build' }, turn: turnOf(OWNER) });
    const first = await h.nextRequest();
    expect(first.subject).toMatchObject({ kind: 'tool', tool: 'tool_manager', rule: 'high-risk' });
    expect(first.rememberable).toBe(false);
    await h.desk.reply({ code: first.code, decision: 'reject', by: OWNER, reason: 'not now' });
    expect(await rejectedCall).toEqual({ ok: false, kind: 'rejected', message: "tool 'tool_manager' was not approved: not now. Nothing ran." });
    expect(runs).toBe(0);

    const approvedCall = dispatcher.dispatch({ tool: 'tool_manager', params: { action: 'build' }, turn: turnOf(OWNER) });
    const second = await h.nextRequest();
    expect(await h.desk.reply({ code: second.code, decision: 'approve-remember', by: OWNER })).toMatchObject({ ok: false, refused: 'not-rememberable' });
    await h.desk.reply({ code: second.code, decision: 'approve', by: OWNER });
    expect(await approvedCall).toEqual({ ok: true, value: 1 });
    expect(runs).toBe(1);
    await h.kernel.stop();
  });
});

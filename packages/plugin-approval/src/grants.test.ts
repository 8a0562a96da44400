import { sessions } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { askOf, type Harness, OWNER, STRANGER, removeTempDirs, startKernel, turnOf, writeAsk } from '../test/harness.js';

afterAll(removeTempDirs);

/** Asks, answers with `decision` by the owner, returns the outcome and the reply. */
async function askAndReply(h: Harness, request: Parameters<Harness['gate']['ask']>[0], decision: 'approve' | 'approve-remember' | 'reject') {
  const asked = h.gate.ask(request);
  const { code } = await h.nextRequest();
  const reply = await h.desk.reply({ code, decision, by: OWNER });
  return { outcome: await asked, reply };
}

describe('grants', () => {
  it('are one-shot by default: the same ask is asked again', async () => {
    const h = await startKernel();
    await askAndReply(h, writeAsk('/srv/a'), 'approve');
    const again = h.gate.ask(writeAsk('/srv/a'));
    await h.nextRequest();
    expect(h.requested).toHaveLength(2);
    expect(h.desk.grants.list('s1')).toEqual([]);
    await h.kernel.stop();
    expect(await again).toMatchObject({ outcome: 'expired' });
  });

  it('remembered: answer a matching ask without prompting, listed, audited as from the grant', async () => {
    const h = await startKernel();
    const { outcome, reply } = await askAndReply(h, writeAsk('/srv/site'), 'approve-remember');
    expect(outcome).toEqual({ outcome: 'approved', by: OWNER, remembered: true });
    expect(reply.ok && reply.grantId).toMatch(/^grant-/);
    const [grant] = h.desk.grants.list('s1');
    expect(grant).toMatchObject({ session: 's1', scope: { kind: 'write-path', rule: 'boundary', target: '/srv/site' }, grantedBy: OWNER });

    expect(await h.gate.ask(writeAsk('/srv/site'))).toEqual({ outcome: 'approved', by: OWNER, remembered: true });
    expect(h.requested).toHaveLength(1);
    expect(h.resolved.at(-1)).toMatchObject({ code: null, via: 'grant', grantId: grant!.id });
    expect((await h.audit()).at(-1)).toMatchObject({ event: 'resolved', code: null, via: 'grant', grantId: grant!.id, answeredBy: OWNER, outcome: 'approved', remembered: true });
    await h.kernel.stop();
  });

  it('are scoped: another target, another rule, another session and another kind are asked', async () => {
    const h = await startKernel();
    await askAndReply(h, writeAsk('/srv/site'), 'approve-remember');
    const others = [
      writeAsk('/srv/site/sub'),
      writeAsk('/srv/sit'),
      writeAsk('/srv/site', { rule: 'landing' }),
      writeAsk('/srv/site', { turn: turnOf(OWNER, 's2') }),
      askOf({ kind: 'host-exec', command: '/srv/site', rule: 'boundary' }),
    ];
    for (const request of others) {
      const asked = h.gate.ask(request);
      const { code } = await h.nextRequest();
      await h.desk.reply({ code, decision: 'reject', by: OWNER });
      expect(await asked).toMatchObject({ outcome: 'rejected' });
    }
    expect(h.requested).toHaveLength(1 + others.length);
    // A child session is part of its root conversation and shares its grants.
    expect(await h.gate.ask(writeAsk('/srv/site', { turn: turnOf(OWNER, 's1-child', 's1') }))).toMatchObject({ outcome: 'approved', remembered: true });
    await h.kernel.stop();
  });

  it('revoked: stop answering at once, and asks come back', async () => {
    const h = await startKernel();
    const deploy = askOf({ kind: 'host-exec', command: 'make deploy', argv: ['make', 'deploy'], cwd: '/srv/site', rule: 'boundary' });
    await askAndReply(h, deploy, 'approve-remember');
    const [grant] = h.desk.grants.list('s1');
    const revoked = await h.desk.grants.revoke(grant!.id, OWNER);
    expect(revoked).toMatchObject({ ok: true, message: expect.stringMatching(/host-exec .*"make","deploy".* will be asked again/) });
    expect(h.desk.grants.list('s1')).toEqual([]);
    expect(await h.desk.grants.revoke(grant!.id, OWNER)).toEqual({ ok: false, refused: 'unknown-grant', message: `there is no grant ${grant!.id}; list the session's grants to see their ids.` });

    const asked = h.gate.ask(deploy);
    const { code } = await h.nextRequest();
    await h.desk.reply({ code, decision: 'approve', by: OWNER });
    expect(await asked).toEqual({ outcome: 'approved', by: OWNER, remembered: false });
    expect((await h.audit()).find((r) => r.event === 'grant-revoked')).toMatchObject({ grantId: grant!.id, by: OWNER, scope: { target: grant!.scope.target } });
    await h.kernel.stop();
  });

  it('never cover the control plane: a non-rememberable ask is refused a remember, and never answered by a grant', async () => {
    const h = await startKernel();
    await askAndReply(h, writeAsk('/home/owner/.aalis/config.json'), 'approve-remember');
    // The same target asked as control plane (rememberable false): the grant does not answer.
    const asked = h.gate.ask(writeAsk('/home/owner/.aalis/config.json', { rememberable: false }));
    const { code } = await h.nextRequest();
    const refused = await h.desk.reply({ code, decision: 'approve-remember', by: OWNER });
    expect(refused).toMatchObject({ ok: false, refused: 'not-rememberable', message: expect.stringMatching(/cannot be remembered.*Reply approve to allow it once, or reject/) });
    expect(await h.desk.reply({ code, decision: 'approve', by: OWNER })).toMatchObject({ ok: true, outcome: { remembered: false } });
    expect(await asked).toEqual({ outcome: 'approved', by: OWNER, remembered: false });

    // A plan is approved once by its nature, whatever the request says.
    const plan = h.gate.ask(askOf({ kind: 'plan', summary: 'refactor', rule: 'plan' }, { rememberable: true }));
    const planShown = await h.nextRequest();
    expect(await h.desk.reply({ code: planShown.code, decision: 'approve-remember', by: OWNER })).toMatchObject({ refused: 'not-rememberable' });
    await h.desk.reply({ code: planShown.code, decision: 'approve', by: OWNER });
    expect(await plan).toMatchObject({ remembered: false });
    expect(h.desk.grants.list('s1')).toHaveLength(1);
    await h.kernel.stop();
  });

  it("do not answer for somebody else's turn, nor when the approver is set to none", async () => {
    const h = await startKernel();
    await askAndReply(h, writeAsk('/srv/shared'), 'approve-remember');
    const strangers = h.gate.ask(writeAsk('/srv/shared', { turn: turnOf(STRANGER) }));
    const { code } = await h.nextRequest();
    await h.desk.reply({ code, decision: 'reject', by: OWNER });
    expect(await strangers).toMatchObject({ outcome: 'rejected', by: OWNER });

    await h.kernel.get(sessions).change('s1', { approver: 'none' });
    expect(await h.gate.ask(writeAsk('/srv/shared'))).toMatchObject({ outcome: 'rejected', by: 'policy' });
    await h.kernel.stop();
  });

  it("are the owner's: a non-owner's revocation is refused, audited, and the grant keeps answering", async () => {
    const h = await startKernel();
    await askAndReply(h, writeAsk('/srv/owned'), 'approve-remember');
    const [grant] = h.desk.grants.list('s1');
    const refused = await h.desk.grants.revoke(grant!.id, STRANGER);
    expect(refused).toEqual({ ok: false, refused: 'not-owner', message: expect.stringMatching(/only the owner may revoke grants; chat:stranger is not an owner/) });
    expect(h.desk.grants.list('s1')).toEqual([grant]);
    expect(await h.gate.ask(writeAsk('/srv/owned'))).toMatchObject({ outcome: 'approved', remembered: true });
    // Refused before looking the grant up: a stranger learns nothing about which ids exist.
    expect(await h.desk.grants.revoke('grant-none', STRANGER)).toMatchObject({ ok: false, refused: 'not-owner' });
    expect((await h.audit()).filter((r) => r.event === 'revoke-refused')).toEqual([
      expect.objectContaining({ grantId: grant!.id, by: STRANGER }),
      expect.objectContaining({ grantId: 'grant-none', by: STRANGER }),
    ]);
    await h.kernel.stop();
  });

  it('two answers remembering the same scope at once leave one grant, and the audit log says which', async () => {
    const h = await startKernel();
    const first = h.gate.ask(writeAsk('/srv/twice'));
    const second = h.gate.ask(writeAsk('/srv/twice'));
    const codes = [(await h.nextRequest()).code, (await h.nextRequest()).code];
    const replies = await Promise.all(codes.map((code) => h.desk.reply({ code, decision: 'approve-remember', by: OWNER })));
    expect(await first).toMatchObject({ outcome: 'approved', remembered: true });
    expect(await second).toMatchObject({ outcome: 'approved', remembered: true });
    const [grant] = h.desk.grants.list('s1');
    expect(h.desk.grants.list('s1')).toHaveLength(1);
    expect(replies.map((r) => r.ok && r.grantId)).toEqual([grant!.id, grant!.id]);
    const audit = await h.audit();
    const named = audit.flatMap((r) => (r.event === 'resolved' && r.grantId !== undefined ? [r.grantId] : []));
    const dropped = audit.filter((r) => r.event === 'grant-dropped');
    // Each answer's line named a grant before it was written; the one never written is dropped in the log.
    expect(dropped).toHaveLength(1);
    expect(new Set(named).size).toBe(2);
    expect(dropped.every((r) => r.event === 'grant-dropped' && r.grantId !== grant!.id && /already covers the same scope/.test(r.reason))).toBe(true);
    await h.kernel.stop();
    const again = await startKernel({ dir: h.dir });
    expect(again.desk.grants.list('s1').map((g) => g.id)).toEqual([grant!.id]);
    await again.kernel.stop();
  });

  it('survive a restart, and so does a revocation', async () => {
    const first = await startKernel();
    await askAndReply(first, writeAsk('/srv/kept'), 'approve-remember');
    await askAndReply(first, writeAsk('/srv/dropped'), 'approve-remember');
    const dropped = first.desk.grants.list('s1').find((g) => g.scope.target === '/srv/dropped')!;
    await first.desk.grants.revoke(dropped.id, OWNER);
    await first.kernel.stop();

    const second = await startKernel({ dir: first.dir });
    expect(second.desk.grants.list('s1').map((g) => g.scope.target)).toEqual(['/srv/kept']);
    expect(await second.gate.ask(writeAsk('/srv/kept'))).toMatchObject({ outcome: 'approved', remembered: true });
    const asked = second.gate.ask(writeAsk('/srv/dropped'));
    const { code } = await second.nextRequest();
    await second.desk.reply({ code, decision: 'reject', by: OWNER });
    expect(await asked).toMatchObject({ outcome: 'rejected' });
    await second.kernel.stop();
  });
});

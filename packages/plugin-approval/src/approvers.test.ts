// The reviewer here is scripted: it stands in for the AI reviewer (a model), which cannot run
// in tests. Everything around it (kernel, sessions, authority, the desk, the audit log) is real.
import { sessions } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER, removeTempDirs, startKernel, turnOf, writeAsk } from '../test/harness.js';
import type { ReviewRequest, ReviewVerdict } from './reviewer.js';

afterAll(removeTempDirs);

/** A reviewer that waits until the test answers for it. */
function scriptedReviewer() {
  const calls: { request: ReviewRequest; answer: (verdict: unknown) => void; fail: (error: Error) => void }[] = [];
  const arrived: (() => void)[] = [];
  let taken = 0;
  return {
    calls,
    reviewer: {
      review: (request: ReviewRequest) =>
        new Promise<ReviewVerdict>((resolve, reject) => {
          calls.push({ request, answer: (v) => resolve(v as ReviewVerdict), fail: reject });
          arrived.shift()?.();
        }),
    },
    next: async () => {
      if (calls.length <= taken) await new Promise<void>((r) => arrived.push(r));
      return calls[taken++]!;
    },
  };
}

describe("approver 'none'", () => {
  it('rejects every ask by policy, says how to change it, shows nothing', async () => {
    const h = await startKernel();
    await h.kernel.get(sessions).change('quiet', { approver: 'none' });
    const outcome = await h.gate.ask(writeAsk('/tmp/a', { turn: turnOf(OWNER, 'quiet') }));
    expect(outcome).toMatchObject({ outcome: 'rejected', by: 'policy' });
    if (outcome.outcome === 'rejected') expect(outcome.reason).toMatch(/approver is set to 'none'.*change the conversation's approver setting to 'human'/);
    expect(h.requested).toEqual([]);
    expect(h.resolved).toEqual([expect.objectContaining({ code: null, via: 'policy' })]);
    expect(await h.audit()).toEqual([expect.objectContaining({ event: 'resolved', via: 'policy', answeredBy: 'policy', outcome: 'rejected', session: 'quiet' })]);

    // A subtask's child session follows its root conversation's setting.
    expect(await h.gate.ask(writeAsk('/tmp/a', { turn: turnOf(OWNER, 'quiet-subtask', 'quiet') }))).toMatchObject({ outcome: 'rejected', by: 'policy' });
    expect(h.requested).toEqual([]);

    // The setting is read at every ask: back to human, the next ask is shown.
    await h.kernel.get(sessions).change('quiet', { approver: 'human' });
    const asked = h.gate.ask(writeAsk('/tmp/a', { turn: turnOf(OWNER, 'quiet') }));
    await h.desk.reply({ code: (await h.nextRequest()).code, decision: 'approve', by: OWNER });
    expect(await asked).toMatchObject({ outcome: 'approved' });
    await h.kernel.stop();
  });
});

describe("approver 'reviewer'", () => {
  it('approves on allow; a denial comes back to the agent with its reason', async () => {
    const script = scriptedReviewer();
    const h = await startKernel({ reviewer: script.reviewer });
    await h.kernel.get(sessions).change('auto', { approver: 'reviewer' });
    const turn = turnOf(OWNER, 'auto');

    const allowed = h.gate.ask(writeAsk('/work/out.txt', { turn }));
    const first = await script.next();
    expect(first.request).toMatchObject({ subject: { kind: 'write-path', path: '/work/out.txt' }, summary: 'write /work/out.txt', turn });
    expect(h.requested.at(-1)).toMatchObject({ approver: 'reviewer', id: first.request.id });
    first.answer({ decision: 'allow', reason: 'inside the project' });
    expect(await allowed).toEqual({ outcome: 'approved', by: 'reviewer', remembered: false });

    const denied = h.gate.ask(writeAsk('/home/owner/.bashrc', { turn }));
    const second = await script.next();
    second.answer({ decision: 'deny', reason: 'shell start-up files are off limits; write a script in the project instead' });
    expect(await denied).toEqual({ outcome: 'rejected', by: 'reviewer', reason: 'shell start-up files are off limits; write a script in the project instead' });
    const resolved = (await h.audit()).filter((r) => r.event === 'resolved');
    expect(resolved.map((r) => r.event === 'resolved' && [r.via, r.answeredBy, r.outcome])).toEqual([
      ['reviewer', 'reviewer', 'approved'],
      ['reviewer', 'reviewer', 'rejected'],
    ]);
    await h.kernel.stop();
  });

  it('lets a person take over while the reviewer thinks; the late verdict is dropped', async () => {
    const script = scriptedReviewer();
    const h = await startKernel({ reviewer: script.reviewer });
    await h.kernel.get(sessions).change('auto', { approver: 'reviewer' });
    const asked = h.gate.ask(writeAsk('/work/a', { turn: turnOf(OWNER, 'auto') }));
    const call = await script.next();
    const { code } = await h.nextRequest();
    expect(await h.desk.reply({ code, decision: 'reject', by: OWNER, reason: 'I will do it myself' })).toMatchObject({ ok: true });
    expect(call.request.signal.aborted).toBe(true);
    call.answer({ decision: 'allow', reason: 'too late' });
    expect(await asked).toEqual({ outcome: 'rejected', by: OWNER, reason: 'I will do it myself' });
    await new Promise((r) => setTimeout(r, 20));
    expect(h.resolved).toHaveLength(1);
    expect((await h.audit()).filter((r) => r.event === 'resolved')).toHaveLength(1);
    await h.kernel.stop();
  });

  it('fails closed when the reviewer throws, answers nonsense, is missing, or is too slow', async () => {
    const script = scriptedReviewer();
    const h = await startKernel({ reviewer: script.reviewer, config: { timeoutMs: 60 } });
    await h.kernel.get(sessions).change('auto', { approver: 'reviewer' });
    const turn = turnOf(OWNER, 'auto');

    const thrown = h.gate.ask(writeAsk('/a', { turn }));
    (await script.next()).fail(new Error('model endpoint down'));
    expect(await thrown).toMatchObject({ outcome: 'rejected', by: 'policy', reason: expect.stringMatching(/the reviewer failed \(model endpoint down\); nothing was approved/) });

    const nonsense = h.gate.ask(writeAsk('/b', { turn }));
    (await script.next()).answer({ decision: 'yes please' });
    expect(await nonsense).toMatchObject({ outcome: 'rejected', by: 'policy', reason: expect.stringMatching(/not a verdict \(decision: .*reason:/) });

    const slow = h.gate.ask(writeAsk('/c', { turn }));
    const slowCall = await script.next();
    expect(await slow).toMatchObject({ outcome: 'expired' });
    expect(slowCall.request.signal.aborted).toBe(true);
    await h.kernel.stop();

    const bare = await startKernel();
    await bare.kernel.get(sessions).change('auto', { approver: 'reviewer' });
    expect(await bare.gate.ask(writeAsk('/d', { turn }))).toMatchObject({
      outcome: 'rejected',
      by: 'policy',
      reason: expect.stringMatching(/no reviewer is running.*Set the approver to 'human', or add a reviewer plugin/),
    });
    await bare.kernel.stop();
  });
});

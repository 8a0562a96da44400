import { afterAll, describe, expect, it } from 'vitest';
import { OWNER, removeTempDirs, startKernel, writeAsk } from '../test/harness.js';
import { withinCall } from './call-scope.js';

afterAll(removeTempDirs);

describe('an ask made inside a call', () => {
  it('ends as cancelled (audited) when the call ends, and its code answers nothing after', async () => {
    const h = await startKernel();
    const call = new AbortController();
    const asked = withinCall(call.signal, () => h.gate.ask(writeAsk('/srv/hung-up')));
    const { id, code } = await h.nextRequest();
    call.abort(new Error('the caller hung up'));
    expect(await asked).toEqual({ outcome: 'rejected', by: 'policy', reason: expect.stringMatching(/^the tool call that asked ended before an answer \(the caller hung up\); nothing was approved/) });
    expect(await h.desk.reply({ code, decision: 'approve', by: OWNER })).toMatchObject({ ok: false, refused: 'already-answered', message: expect.stringMatching(/because the call that asked ended/) });
    expect(h.resolved).toEqual([expect.objectContaining({ id, via: 'cancelled' })]);
    expect((await h.audit()).filter((r) => r.event === 'resolved')).toEqual([expect.objectContaining({ id, via: 'cancelled', outcome: 'rejected', answeredBy: 'policy' })]);
    await h.kernel.stop();
  });

  it('is refused at once, never shown, when the call has already ended', async () => {
    const h = await startKernel();
    const call = new AbortController();
    call.abort(new Error('the caller hung up'));
    expect(await withinCall(call.signal, () => h.gate.ask(writeAsk('/srv/late')))).toMatchObject({ outcome: 'rejected', by: 'policy' });
    expect(h.requested).toEqual([]);
    expect((await h.audit()).at(-1)).toMatchObject({ event: 'resolved', via: 'cancelled', code: null });
    await h.kernel.stop();
  });

  it('is not touched by the end of another call, and is answered as usual', async () => {
    const h = await startKernel();
    const other = new AbortController();
    const mine = new AbortController();
    const asked = withinCall(mine.signal, () => h.gate.ask(writeAsk('/srv/mine')));
    const { code } = await h.nextRequest();
    other.abort(new Error('another caller hung up'));
    expect(await h.desk.reply({ code, decision: 'approve', by: OWNER })).toMatchObject({ ok: true });
    expect(await asked).toMatchObject({ outcome: 'approved' });
    // Ending the call after its answer changes nothing.
    mine.abort(new Error('done'));
    expect(h.resolved).toEqual([expect.objectContaining({ via: 'human' })]);
    await h.kernel.stop();
  });
});

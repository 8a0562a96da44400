// The docker deployment's rule at the approval desk, with the real plugin in a real kernel: two
// owners, each answering and revoking only for themselves; the console's identity as the admin.
import type { Identity } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, startKernel, turnOf, writeAsk } from '../test/harness.js';

afterAll(removeTempDirs);

const ALICE: Identity = { platform: 'chat', userId: 'alice' };
const CAROL: Identity = { platform: 'chat', userId: 'carol' };
const ADMIN: Identity = { platform: 'console', userId: 'operator' };
const owners = { chat: ['alice', 'carol'], console: ['operator'] };

describe('persons: each person answers and revokes only their own', () => {
  it("another owner cannot answer a person's ask (not even approve-remember), the person can", async () => {
    const h = await startKernel({ owners, config: { persons: { admins: [ADMIN] } } });
    const asked = h.gate.ask(writeAsk('/work/alice/notes.txt', { turn: turnOf(ALICE, 'alice-dm') }));
    const { code, id } = await h.nextRequest();
    for (const decision of ['approve', 'approve-remember', 'reject'] as const) {
      expect(await h.desk.reply({ code, decision, by: CAROL })).toMatchObject({ ok: false, refused: 'not-theirs', id, message: expect.stringContaining('raised for chat:alice') });
    }
    expect(h.desk.grants.list('alice-dm')).toEqual([]);
    expect(h.desk.pending('alice-dm').map((p) => p.code)).toEqual([code]);
    expect(await h.desk.reply({ code, decision: 'approve-remember', by: ALICE })).toMatchObject({ ok: true });
    expect(await asked).toMatchObject({ outcome: 'approved', by: ALICE, remembered: true });
    const audit = await h.audit();
    expect(audit.filter((r) => r.event === 'reply-refused')).toHaveLength(3);
    await h.kernel.stop();
  });

  it("another owner cannot revoke a person's grant; the person and an admin can", async () => {
    const h = await startKernel({ owners, config: { persons: { admins: [ADMIN] } } });
    for (const path of ['/a', '/b']) {
      const asked = h.gate.ask(writeAsk(path, { turn: turnOf(ALICE, 'alice-dm') }));
      const { code } = await h.nextRequest();
      expect(await h.desk.reply({ code, decision: 'approve-remember', by: ALICE })).toMatchObject({ ok: true });
      await asked;
    }
    const [first, second] = h.desk.grants.list('alice-dm');
    expect(await h.desk.grants.revoke(first?.id ?? '', CAROL)).toMatchObject({ ok: false, refused: 'not-theirs' });
    expect(h.desk.grants.list('alice-dm')).toHaveLength(2);
    expect(await h.desk.grants.revoke(first?.id ?? '', ALICE)).toMatchObject({ ok: true });
    expect(await h.desk.grants.revoke(second?.id ?? '', ADMIN)).toMatchObject({ ok: true });
    expect(h.desk.grants.list('alice-dm')).toEqual([]);
    await h.kernel.stop();
  });

  it('an admin answers any ask; without persons any owner still may (the host deployment)', async () => {
    const h = await startKernel({ owners, config: { persons: { admins: [ADMIN] } } });
    const asked = h.gate.ask(writeAsk('/x', { turn: turnOf(ALICE, 'alice-dm') }));
    const { code } = await h.nextRequest();
    expect(await h.desk.reply({ code, decision: 'reject', by: ADMIN, reason: 'no' })).toMatchObject({ ok: true });
    expect(await asked).toMatchObject({ outcome: 'rejected', by: ADMIN });
    await h.kernel.stop();

    const host = await startKernel({ owners });
    const hostAsk = host.gate.ask(writeAsk('/x', { turn: turnOf(ALICE, 'alice-dm') }));
    const shown = await host.nextRequest();
    expect(await host.desk.reply({ code: shown.code, decision: 'approve', by: CAROL })).toMatchObject({ ok: true });
    await hostAsk;
    await host.kernel.stop();
  });
});

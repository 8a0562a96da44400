// Real write failures, not mocks: the files are replaced by directories (running as root,
// permissions would not stop the writes), so the kernel's own writes fail with EISDIR.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER, removeTempDirs, startKernel, writeAsk } from '../test/harness.js';

afterAll(removeTempDirs);

async function breakFile(path: string): Promise<void> {
  await rm(path, { force: true });
  await mkdir(path, { recursive: true });
  await writeFile(join(path, 'blocker'), '');
}

describe('when the store fails', () => {
  it('an ask that cannot be recorded is rejected and never shown', async () => {
    const h = await startKernel();
    await breakFile(join(h.dir, 'approval', 'audit.jsonl'));
    const outcome = await h.gate.ask(writeAsk('/srv/x'));
    expect(outcome).toMatchObject({ outcome: 'rejected', by: 'policy', reason: expect.stringMatching(/the ask could not be recorded \(.*EISDIR.*\); nothing was approved/) });
    expect(h.requested).toEqual([]);
    await h.kernel.stop();
  });

  it("an owner's approval that cannot be audited becomes a rejection", async () => {
    const h = await startKernel();
    const asked = h.gate.ask(writeAsk('/srv/y'));
    const { code } = await h.nextRequest();
    await breakFile(join(h.dir, 'approval', 'audit.jsonl'));
    const reply = await h.desk.reply({ code, decision: 'approve', by: OWNER });
    expect(reply).toMatchObject({ ok: true, outcome: { outcome: 'rejected', by: 'policy' } });
    expect(await asked).toMatchObject({ outcome: 'rejected', reason: expect.stringMatching(/could not be written to the audit log.*nothing was approved/) });
    await h.kernel.stop();
  });

  it('a grant that cannot be saved leaves the approval once, not remembered', async () => {
    const h = await startKernel();
    await breakFile(join(h.dir, 'approval', 'grants.json'));
    const asked = h.gate.ask(writeAsk('/srv/z'));
    const { code } = await h.nextRequest();
    expect(await h.desk.reply({ code, decision: 'approve-remember', by: OWNER })).toMatchObject({
      ok: true,
      outcome: { outcome: 'approved', remembered: false },
      message: expect.stringMatching(/approved once; it could not be remembered \(.*\)/),
    });
    expect(await asked).toEqual({ outcome: 'approved', by: OWNER, remembered: false });
    expect(h.desk.grants.list('s1')).toEqual([]);
    // Audit first: the approval's line names the grant, and the next line says it was never saved.
    const [resolved, dropped] = (await h.audit()).slice(-2);
    expect(resolved).toMatchObject({ event: 'resolved', outcome: 'approved', grantId: expect.any(String) });
    expect(dropped).toMatchObject({ event: 'grant-dropped', grantId: resolved?.event === 'resolved' ? resolved.grantId : '', reason: expect.stringMatching(/could not be saved .*counted once/) });
    // Nothing was remembered: the next ask is shown again.
    const again = h.gate.ask(writeAsk('/srv/z'));
    await h.nextRequest();
    await h.kernel.stop();
    expect(await again).toMatchObject({ outcome: 'expired' });
  });
});

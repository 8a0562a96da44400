import { spawn } from 'node:child_process';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER, removeTempDirs, startKernel, tempDir, writeAsk } from '../test/harness.js';

afterAll(removeTempDirs);

interface Reported {
  approved: { id: string; code: string };
  pending: { id: string; code: string }[];
}

/** Runs the crash-asker daemon on `dir` until it reports, then kills it with SIGKILL. */
async function crashAfterAsking(dir: string): Promise<Reported> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'crash-asker.ts'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`crash-asker exited early with ${code}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  return JSON.parse(line) as Reported;
}

describe('a restart', () => {
  it('after a real crash: resolves what was pending as expired, once, audited, never approved', async () => {
    const dir = await tempDir();
    const reported = await crashAfterAsking(dir);
    expect(reported.pending).toHaveLength(2);
    // A crash in the middle of an append leaves a torn last line; recovery must survive it.
    await appendFile(join(dir, 'approval', 'audit.jsonl'), '{"v":1,"at":"2024-');

    const after = await startKernel({ dir });
    const leftIds = reported.pending.map((p) => p.id).sort();
    expect(after.resolved.map((e) => e.id).sort()).toEqual(leftIds);
    for (const event of after.resolved) {
      expect(event).toMatchObject({ via: 'restart', outcome: { outcome: 'expired' }, session: { id: 'conv' } });
    }
    // The old codes answer nothing now.
    for (const { code } of reported.pending) {
      expect(await after.desk.reply({ code, decision: 'approve', by: OWNER })).toMatchObject({ ok: false, refused: 'unknown-code' });
    }
    expect(after.desk.pending()).toEqual([]);
    // New asks work, and their lines are whole after the torn one.
    const asked = after.gate.ask(writeAsk('/srv/new'));
    await after.desk.reply({ code: (await after.nextRequest()).code, decision: 'approve', by: OWNER });
    expect(await asked).toMatchObject({ outcome: 'approved' });
    await after.kernel.stop();

    const audit = await after.audit();
    const resolvedOf = (id: string) => audit.filter((r) => r.event === 'resolved' && r.id === id);
    expect(resolvedOf(reported.approved.id)).toEqual([expect.objectContaining({ via: 'human', outcome: 'approved' })]);
    for (const id of leftIds) {
      expect(resolvedOf(id)).toEqual([
        expect.objectContaining({ via: 'restart', outcome: 'expired', answeredBy: null, reason: expect.stringMatching(/restarted while this ask was pending; nothing was approved/) }),
      ]);
    }
    expect(audit.filter((r) => r.event === 'resolved' && r.outcome === 'approved').map((r) => r.event === 'resolved' && r.subject)).toEqual([
      expect.objectContaining({ path: '/srv/approved' }),
      expect.objectContaining({ path: '/srv/new' }),
    ]);

    // Exactly once: a second restart finds nothing left.
    const again = await startKernel({ dir });
    expect(again.resolved).toEqual([]);
    await again.kernel.stop();
  }, 60_000);

  it('honours only grants the audit log shows in force, and says so for the rest', async () => {
    const first = await startKernel();
    for (const path of ['/srv/audited', '/srv/revoked', '/srv/unsaved']) {
      const asked = first.gate.ask(writeAsk(path));
      await first.desk.reply({ code: (await first.nextRequest()).code, decision: 'approve-remember', by: OWNER });
      await asked;
    }
    await first.kernel.stop();
    const grantsFile = join(first.dir, 'approval', 'grants.json');
    const doc = JSON.parse(await readFile(grantsFile, 'utf8')) as { v: 1; grants: { id: string; scope: { target: string } }[] };
    const byTarget = (t: string) => doc.grants.find((g) => g.scope.target === t)!;
    // What a kill leaves: a grant written with no audit line (the old order), a revocation
    // audited but not yet removed, and an audited grant that was never saved.
    const forged = { ...byTarget('/srv/audited'), id: 'grant-never-audited', scope: { ...byTarget('/srv/audited').scope, target: '/srv/forged' }, subject: { kind: 'write-path', path: '/srv/forged', rule: 'boundary' } };
    const revoked = byTarget('/srv/revoked');
    const unsaved = byTarget('/srv/unsaved');
    await appendFile(join(first.dir, 'approval', 'audit.jsonl'), `${JSON.stringify({ v: 1, at: new Date().toISOString(), event: 'grant-revoked', grantId: revoked.id, session: 's1', scope: revoked.scope, by: OWNER })}\n`);
    await writeFile(grantsFile, JSON.stringify({ v: 1, grants: [...doc.grants.filter((g) => g !== unsaved), forged] }));

    const after = await startKernel({ dir: first.dir });
    expect(after.desk.grants.list('s1').map((g) => g.scope.target)).toEqual(['/srv/audited']);
    const audit = await after.audit();
    expect(audit.filter((r) => r.event === 'grant-dropped')).toEqual([
      expect.objectContaining({ grantId: revoked.id, reason: expect.stringMatching(/no audit line shows this grant given \(or it was revoked\)/) }),
      expect.objectContaining({ grantId: 'grant-never-audited' }),
      expect.objectContaining({ grantId: unsaved.id, reason: expect.stringMatching(/stopped before this grant was saved/) }),
    ]);
    // The forged grant does not answer: its ask is shown.
    const asked = after.gate.ask(writeAsk('/srv/forged'));
    expect((await after.nextRequest()).subject).toMatchObject({ path: '/srv/forged' });
    await after.kernel.stop();
    expect(await asked).toMatchObject({ outcome: 'expired' });

    // Reconciled once: a second restart drops nothing more.
    const again = await startKernel({ dir: first.dir });
    expect((await again.audit()).filter((r) => r.event === 'grant-dropped')).toHaveLength(3);
    await again.kernel.stop();
  });

  it('after an orderly stop: pending asks end as expired for their callers, and nothing is left', async () => {
    const h = await startKernel();
    const asked = h.gate.ask(writeAsk('/srv/stopping'));
    const { code } = await h.nextRequest();
    await h.kernel.stop();
    expect(await asked).toMatchObject({ outcome: 'expired' });
    expect(h.resolved).toEqual([expect.objectContaining({ via: 'shutdown', outcome: expect.objectContaining({ outcome: 'expired' }) })]);
    expect(await h.desk.reply({ code, decision: 'approve', by: OWNER })).toMatchObject({ ok: false, refused: 'stopped' });
    expect(await h.gate.ask(writeAsk('/srv/too-late'))).toMatchObject({ outcome: 'rejected', by: 'policy', reason: expect.stringMatching(/stopping/) });

    const after = await startKernel({ dir: h.dir });
    expect(after.resolved).toEqual([]);
    await after.kernel.stop();
  });
});

// Writes an audit log of `lines` lines shaped like a busy daemon's: asks and their answers, a
// remembered grant every hundredth ask (revoked again), nothing left open. For load tests and the
// start-up benchmarks (this package's and the cli's).
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';

const owner = { platform: 'chat', userId: 'owner' };
const turn = { platform: 'chat', speaker: owner, authorised: owner, inbound: { id: 'm-0123456789' }, category: 'own' };

/** Writes the log; resolves once it is on disk (fsync'd, so its writeback does not stall what is measured next). */
export async function writeSyntheticAuditLog(file: string, lines: number): Promise<void> {
  const out = createWriteStream(file, { mode: 0o600 });
  const at = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();
  let written = 0;
  let batch = '';
  const put = (record: object) => {
    if (written >= lines) return;
    batch += `${JSON.stringify({ v: 1, at, ...record })}\n`;
    written++;
  };
  for (let i = 0; written < lines; i++) {
    const id = `apr-${String(i).padStart(12, '0')}-0000-0000-0000-000000000000`;
    const subject = { kind: 'write-path', path: `/home/someone/project/out/file-${i}.txt`, rule: 'boundary' };
    const session = `chat-${i % 97}`;
    put({ event: 'requested', id, code: 'ABCDEF', session, turn, subject, summary: `write_file ${subject.path}`, rule: 'boundary', approver: 'human', rememberable: true, timeoutMs: 300000 });
    const grantId = i % 100 === 0 ? `grant-${i}` : undefined;
    put({ event: 'resolved', id, code: 'ABCDEF', session, turn, subject, rule: 'boundary', via: 'human', answeredBy: owner, outcome: 'approved', ...(grantId ? { remembered: true, grantId } : {}) });
    if (grantId) put({ event: 'grant-revoked', grantId, session, scope: { kind: 'write-path', rule: 'boundary', target: subject.path }, by: owner });
    if (batch.length > 1 << 20 || written >= lines) {
      if (!out.write(batch)) await once(out, 'drain');
      batch = '';
    }
  }
  out.end();
  await once(out, 'close');
  const handle = await open(file, 'r');
  await handle.sync();
  await handle.close();
}

// Who may end what, through the real daemon and its HTTP API: revoking a grant is the owner's,
// and a caller that hangs up ends its call and the call's asks.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe, subscribe } from './serve-process.testing.js';

const ALICE = { platform: 'chat', userId: 'alice' };
const MALLORY = { platform: 'chat', userId: 'mallory' };

describe('aalis serve: approvals at the seams', () => {
  let dir: string;
  let daemon: ServeProcess;
  let outside: string;
  const audit = () =>
    readFileSync(join(dir, 'data', 'approval', 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));

  beforeAll(async () => {
    dir = deploymentDir({ owners: { chat: ['alice'] }, approval: { timeoutMs: 60_000 } });
    outside = join(dir, '..', `${dir.split('/').pop()}-outside`);
    mkdirSync(outside, { recursive: true });
    daemon = await startServe(dir);
  });
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it("refuses a non-owner's revocation of the owner's grant with 403, and keeps the grant", async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-revoke');
    try {
      const target = join(outside, 'granted.txt');
      const call = daemon.api('POST', '/api/tools/call', { tool: 'write_file', params: { path: target, content: 'one' }, turn: ownerTurn('chat-revoke') });
      const requested = await stream.next('approval/requested');
      expect((await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'approve-remember', by: ALICE })).status).toBe(200);
      expect((await call).body).toMatchObject({ ok: true });
      const [grant] = (await daemon.api('GET', '/api/grants?session=chat-revoke')).body.grants;
      expect(grant).toMatchObject({ scope: { kind: 'write-path' } });

      const refused = await daemon.api('POST', '/api/grants/revoke', { id: grant.id, by: MALLORY });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toEqual({ code: 'not-owner', message: expect.stringMatching(/only the owner may revoke grants; chat:mallory is not an owner/) });
      expect((await daemon.api('GET', '/api/grants?session=chat-revoke')).body.grants).toEqual([grant]);
      expect(audit()).toContainEqual(expect.objectContaining({ event: 'revoke-refused', grantId: grant.id, by: MALLORY, session: 'chat-revoke' }));

      const revoked = await daemon.api('POST', '/api/grants/revoke', { id: grant.id, by: ALICE });
      expect(revoked.status).toBe(200);
      expect((await daemon.api('GET', '/api/grants?session=chat-revoke')).body.grants).toEqual([]);
      expect((await daemon.api('POST', '/api/grants/revoke', { id: grant.id, by: ALICE })).status).toBe(404);
    } finally {
      stream.close();
    }
  });

  it('a caller that hangs up ends its ask as cancelled, and approving the code later writes nothing', async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-hangup');
    const target = join(outside, 'hung-up.txt');
    try {
      // A raw request, so the test owns the socket and can close it mid-call.
      const body = JSON.stringify({ tool: 'write_file', params: { path: target, content: 'late' }, turn: ownerTurn('chat-hangup') });
      const { hostname, port } = new URL(daemon.url);
      const req = request({ host: hostname, port, method: 'POST', path: '/api/tools/call', headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
      req.on('error', () => {});
      req.end(body);
      const requested = await stream.next('approval/requested');
      req.destroy();

      // The ask leaves the pending list when the call ends (give it up to 5 s).
      for (let i = 0; i < 50 && (await daemon.api('GET', '/api/approvals/pending?session=chat-hangup')).body.pending.length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      const reply = await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'approve', by: ALICE });
      expect(reply.status).not.toBe(200);
      expect(reply.body.error.code).toMatch(/unknown-code|already-answered/);
      const resolved = await stream.next('approval/resolved', (e) => e.id === requested.id, 5000);
      expect(resolved).toMatchObject({ via: 'cancelled', outcome: { outcome: 'rejected', by: 'policy', reason: expect.stringMatching(/the tool call that asked ended before an answer \(the caller hung up\); nothing was approved/) } });
      await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(target)).toBe(false);
      expect(audit().filter((r) => r.id === requested.id && r.event === 'resolved')).toEqual([expect.objectContaining({ via: 'cancelled', outcome: 'rejected', answeredBy: 'policy' })]);
    } finally {
      stream.close();
    }
  });
});

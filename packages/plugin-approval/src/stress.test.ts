// Thousands of asks, replies and expiries racing on real timers, a real kernel and a real
// audit log on disk. Timing is random, so the test does not predict who wins each race; it
// checks that every ask was answered exactly once and by the answer that claimed it.
import { type ApprovalOutcome, sessions } from '@aalis/core';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER, STRANGER, removeTempDirs, startKernel, turnOf, writeAsk } from '../test/harness.js';
import type { ReplyResult } from './reply.js';
import type { ReviewRequest } from './reviewer.js';

afterAll(removeTempDirs);

const ASKS = 3000;
const TIMEOUT_MS = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Plan = 'approve' | 'reject' | 'stranger-then-owner' | 'double' | 'silent';
const PLANS: readonly Plan[] = ['approve', 'reject', 'stranger-then-owner', 'double', 'silent'];

describe('racing asks, replies and expiries', () => {
  it(`accounts for every one of ${ASKS} asks exactly once`, async () => {
    const h = await startKernel({ config: { timeoutMs: TIMEOUT_MS, codeLength: 4 } });
    const replies = new Map<string, { plan: Plan; results: ReplyResult[] }>();
    const replying: Promise<void>[] = [];
    let n = 0;
    h.kernel.events.on('approval/requested', (event) => {
      const plan = PLANS[n++ % PLANS.length]!;
      const record = { plan, results: [] as ReplyResult[] };
      replies.set(event.id, record);
      // Delays straddle the timeout, so replies land before, around and after expiry.
      const delay = Math.random() * TIMEOUT_MS * 2;
      const send = async (decision: 'approve' | 'reject', by = OWNER) => {
        record.results.push(await h.desk.reply({ code: event.code, decision, by }));
      };
      replying.push(
        (async () => {
          await sleep(delay);
          if (plan === 'approve') await send('approve');
          if (plan === 'reject') await send('reject');
          if (plan === 'stranger-then-owner') {
            await send('approve', STRANGER);
            await send('approve');
          }
          if (plan === 'double') await Promise.all([send('approve'), send('reject')]);
        })(),
      );
    });

    const outcomes = await Promise.all(Array.from({ length: ASKS }, (_, i) => h.gate.ask(writeAsk(`/srv/f${i}`, { turn: turnOf(OWNER, `s${i % 7}`) }))));
    await Promise.all(replying);
    // Replies that lost to expiry may still be writing their refusals.
    await sleep(50);

    const byId = new Map(h.resolved.map((e) => [e.id, e]));
    expect(h.requested).toHaveLength(ASKS);
    expect(h.resolved).toHaveLength(ASKS);
    expect(byId.size).toBe(ASKS);
    expect(new Set(h.requested.map((e) => e.id)).size).toBe(ASKS);
    // Codes are unique among pending and recently settled asks (4096 > ASKS: none reused here).
    expect(new Set(h.requested.map((e) => e.code)).size).toBe(ASKS);

    const tally = { approved: 0, rejected: 0, expired: 0, lateReplies: 0, strangerRefused: 0, doubleBothTried: 0 };
    for (const shown of h.requested) {
      const event = byId.get(shown.id)!;
      const record = replies.get(shown.id)!;
      const won = record.results.filter((r) => r.ok);
      expect(won.length).toBeLessThanOrEqual(1);
      for (const result of record.results) {
        if (result.ok) continue;
        expect(result.id).toBe(shown.id);
        expect(['already-answered', 'not-owner']).toContain(result.refused);
        if (result.refused === 'not-owner') tally.strangerRefused++;
        if (result.refused === 'already-answered') tally.lateReplies++;
      }
      if (won[0]?.ok) {
        expect(event.via).toBe('human');
        expect(event.outcome).toEqual(won[0].outcome);
      } else {
        // Nobody's reply claimed it: it can only have expired, never been approved.
        expect(event).toMatchObject({ via: 'timeout', outcome: { outcome: 'expired' } });
      }
      if (record.plan === 'silent') expect(event.outcome.outcome).toBe('expired');
      if (record.plan === 'double' && record.results.length === 2) tally.doubleBothTried++;
      tally[event.outcome.outcome]++;
    }

    // Each caller got the outcome its own ask resolved to.
    const outcomeOfPath = new Map<string, ApprovalOutcome>(outcomes.map((o, i) => [`/srv/f${i}`, o]));
    for (const shown of h.requested) {
      const path = shown.subject.kind === 'write-path' ? shown.subject.path : '';
      expect(outcomeOfPath.get(path)).toEqual(byId.get(shown.id)!.outcome);
    }

    // Every race actually happened.
    expect(tally.approved).toBeGreaterThan(0);
    expect(tally.rejected).toBeGreaterThan(0);
    expect(tally.expired).toBeGreaterThan(ASKS / PLANS.length);
    expect(tally.lateReplies).toBeGreaterThan(0);
    expect(tally.strangerRefused).toBeGreaterThan(0);
    expect(tally.doubleBothTried).toBe(ASKS / PLANS.length);

    // The audit log says the same: one `requested` and one `resolved` line per ask.
    const audit = await h.audit();
    const requestedLines = audit.filter((r) => r.event === 'requested');
    const resolvedLines = audit.filter((r) => r.event === 'resolved');
    expect(requestedLines).toHaveLength(ASKS);
    expect(resolvedLines).toHaveLength(ASKS);
    expect(new Set(resolvedLines.map((r) => r.id)).size).toBe(ASKS);
    for (const line of resolvedLines) expect(line.outcome).toBe(byId.get(line.id)!.outcome.outcome);
    expect(h.desk.pending()).toEqual([]);

    await h.kernel.stop();
    // Nothing was left pending: a kernel on the same directory finds nothing to expire.
    const after = await startKernel({ dir: h.dir });
    expect(after.resolved).toEqual([]);
    await after.kernel.stop();
    console.log(`stress: ${ASKS} asks, ${JSON.stringify(tally)}`);
  }, 120_000);

  // The reviewer is scripted (it stands in for a model): it answers after a random delay.
  it('lets exactly one of reviewer, person and expiry answer each of 1000 asks', async () => {
    const REVIEWED = 1000;
    const verdicts = new Map<string, 'allow' | 'deny'>();
    const reviewer = {
      review: async (request: ReviewRequest) => {
        await sleep(Math.random() * TIMEOUT_MS * 2);
        const decision = Math.random() < 0.5 ? 'allow' : 'deny';
        verdicts.set(request.id, decision);
        return { decision, reason: `scripted ${decision}` } as const;
      },
    };
    const h = await startKernel({ reviewer, config: { timeoutMs: TIMEOUT_MS } });
    await h.kernel.get(sessions).change('auto', { approver: 'reviewer' });
    const wins = new Map<string, ApprovalOutcome>();
    const replying: Promise<void>[] = [];
    h.kernel.events.on('approval/requested', (event) => {
      replying.push(
        (async () => {
          await sleep(Math.random() * TIMEOUT_MS * 2);
          const result = await h.desk.reply({ code: event.code, decision: 'reject', by: OWNER, reason: 'person' });
          if (result.ok) wins.set(event.id, result.outcome);
          else expect(result.refused).toBe('already-answered');
        })(),
      );
    });
    await Promise.all(Array.from({ length: REVIEWED }, (_, i) => h.gate.ask(writeAsk(`/r/${i}`, { turn: turnOf(OWNER, 'auto') }))));
    await Promise.all(replying);
    expect(h.resolved).toHaveLength(REVIEWED);
    const via = { human: 0, reviewer: 0, timeout: 0 } as Record<string, number>;
    for (const event of h.resolved) {
      via[event.via] = (via[event.via] ?? 0) + 1;
      if (event.via === 'human') expect(event.outcome).toEqual(wins.get(event.id));
      else expect(wins.has(event.id)).toBe(false);
      if (event.via === 'reviewer') {
        const decision = verdicts.get(event.id);
        expect(event.outcome).toEqual(decision === 'allow' ? { outcome: 'approved', by: 'reviewer', remembered: false } : { outcome: 'rejected', by: 'reviewer', reason: 'scripted deny' });
      }
      if (event.via === 'timeout') expect(event.outcome.outcome).toBe('expired');
    }
    expect(via.human).toBeGreaterThan(0);
    expect(via.reviewer).toBeGreaterThan(0);
    expect(via.timeout).toBeGreaterThan(0);
    expect(via.human! + via.reviewer! + via.timeout!).toBe(REVIEWED);
    const resolvedLines = (await h.audit()).filter((r) => r.event === 'resolved');
    expect(new Set(resolvedLines.map((r) => r.id)).size).toBe(REVIEWED);
    expect(resolvedLines).toHaveLength(REVIEWED);
    await h.kernel.stop();
    console.log(`stress (reviewer): ${REVIEWED} asks, ${JSON.stringify(via)}`);
  }, 120_000);
});

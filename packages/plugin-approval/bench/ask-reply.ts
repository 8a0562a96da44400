// What an approval costs beyond its two audit lines: ask -> shown -> reply -> answered, one at
// a time and many at once, against the baseline of two bare DurableStore appends per ask in
// the same run (the floor: every ask writes a `requested` and a `resolved` line, fsync'd).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { approval, authorityPlugin, createKernel, DurableStore, type OriginTurn, sessionsPlugin } from '@aalis/core';
import { approvalDesk, approvalPlugin } from '../src/index.js';
import { recordFigure } from '../../../test/bench/record-figure.js';

const owner = { platform: 'chat', userId: 'owner' };
const turn: OriginTurn = { session: { id: 'bench' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: 'm' }, category: 'own' };

async function baseline(count: number, concurrent: boolean): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-approval-bench-'));
  const store = await DurableStore.open(dir);
  const record = { v: 1, at: new Date().toISOString(), event: 'resolved', id: 'apr-00000000-0000-0000-0000-000000000000', turn, pad: 'x'.repeat(200) };
  const start = performance.now();
  if (concurrent) await Promise.all(Array.from({ length: count * 2 }, () => store.append('audit', record)));
  else for (let i = 0; i < count * 2; i++) await store.append('audit', record);
  const ms = performance.now() - start;
  await rm(dir, { recursive: true, force: true });
  return ms;
}

async function approvals(count: number, concurrent: boolean): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-approval-bench-'));
  const kernel = createKernel({ dataDir: dir }).use(sessionsPlugin).use(authorityPlugin, { owners: { chat: ['owner'] } }).use(approvalPlugin);
  kernel.events.on('approval/requested', (e) => void desk().reply({ code: e.code, decision: 'approve', by: owner }));
  await kernel.start();
  const desk = () => kernel.get(approvalDesk);
  const gate = kernel.get(approval);
  const ask = (i: number) => gate.ask({ turn, subject: { kind: 'write-path', path: `/srv/${i}`, rule: 'boundary' }, summary: `write /srv/${i}`, rememberable: true });
  const start = performance.now();
  if (concurrent) await Promise.all(Array.from({ length: count }, (_, i) => ask(i)));
  else for (let i = 0; i < count; i++) await ask(i);
  const ms = performance.now() - start;
  await kernel.stop();
  await rm(dir, { recursive: true, force: true });
  return ms;
}

// Warm the disk and the module cache so neither side pays for the first fsyncs.
await baseline(100, false);
await approvals(50, false);

for (const [label, count, concurrent] of [
  ['sequential', 300, false],
  ['concurrent', 2000, true],
] as const) {
  const floor = await baseline(count, concurrent);
  const real = await approvals(count, concurrent);
  console.log(
    `${label}: ${count} asks approved in ${real.toFixed(0)} ms (${((real / count) * 1000).toFixed(0)} us/ask); ` +
      `baseline ${count * 2} bare appends ${floor.toFixed(0)} ms; ratio ${(real / floor).toFixed(2)}x`,
  );
  recordFigure({ id: `approval.ask-${label}`, what: `an approval asked and answered, audited (${label}, ${count} asks)`, candidate: (real / count) * 1000, baseline: { what: 'two bare fsync\'d appends', value: (floor / count) * 1000 }, unit: 'µs', rounds: count });
}

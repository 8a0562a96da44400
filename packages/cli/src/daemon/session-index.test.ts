import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionIndex } from './session-index.js';

const LOOPER = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'session-looper.ts');
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-index-'));
  dirs.push(dir);
  return dir;
}

/** Runs the looper on `dir` for about `ms`, SIGKILLs it, and returns the ids it said were on disk. */
function killedAfter(dir: string, ms: number, start: number, concurrent = 1): Promise<string[]> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', LOOPER, dir, String(start), String(concurrent)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let killed = false;
    child.stdout.on('data', (d) => {
      out += d;
      // Kill only once it is writing (module loading can take seconds on a shared machine).
      if (!killed) {
        killed = true;
        setTimeout(() => child.kill('SIGKILL'), ms);
      }
    });
    child.on('error', fail);
    child.on('exit', () => done(out.split('\n').slice(0, -1)));
  });
}

describe('the conversation index', () => {
  it.each([1, 8])('keeps every acknowledged conversation through SIGKILLs at random points, compactions included (%i calls at a time)', async (concurrent) => {
    const dir = await temp();
    const acknowledged = new Set<string>();
    let start = 0;
    for (let round = 0; round < 6; round++) {
      const ids = await killedAfter(dir, 50 + Math.floor(Math.random() * 400), start, concurrent);
      for (const id of ids) acknowledged.add(id);
      start += ids.length + 100;
      const index = await SessionIndex.open(dir);
      const missing = [...acknowledged].filter((id) => !index.has(id));
      expect(missing).toEqual([]);
    }
    expect(acknowledged.size).toBeGreaterThan(50);
  }, 120_000);

  it('writes one journal line per call, not the whole index, and folds the journal in once it outgrows the index', async () => {
    const dir = await temp();
    const index = await SessionIndex.open(dir, { compactAfter: 10 });
    for (let i = 0; i < 9; i++) await index.seen(`s${i}`, 'chat');
    const snapshotBefore = await readFile(join(dir, 'sessions.json'), 'utf8').catch(() => null);
    expect(snapshotBefore).toBeNull();
    await index.seen('s9', 'chat');
    // the index orders by (lastSeen, id), lastSeen in milliseconds: s0 is the most recent only a
    // millisecond on (in the same one, s9 is first by its id; the CI run saw that once)
    await new Promise((r) => setTimeout(r, 3));
    await index.seen('s0', 'chat');
    const snapshot = JSON.parse(await readFile(join(dir, 'sessions.json'), 'utf8')) as { sessions: { id: string }[] };
    expect(snapshot.sessions.map((s) => s.id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `s${i}`).sort());
    const journal = (await readFile(join(dir, 'sessions-journal.jsonl'), 'utf8')).trim().split('\n');
    expect(journal.map((l) => JSON.parse(l).id)).toEqual(['s0']);
    const reopened = await SessionIndex.open(dir);
    expect(reopened.list()[0]?.id).toBe('s0');
    expect(reopened.list()).toHaveLength(10);
  });

  it('writes a snapshot of many slices (made between turns of the event loop) that replays every conversation', async () => {
    const dir = await temp();
    const index = await SessionIndex.open(dir, { compactAfter: 10 });
    const ids = Array.from({ length: 9001 }, (_, i) => `m${i}`);
    // two batches, each noted before its write starts: the second brings the journal past the index
    await Promise.all(ids.slice(0, 4500).map((id) => index.seen(id, 'chat')));
    await Promise.all(ids.slice(4500).map((id) => index.seen(id, 'chat')));
    await index.seen('m0', 'chat'); // behind the compaction
    const snapshot = JSON.parse(await readFile(join(dir, 'sessions.json'), 'utf8')) as { v: number; sessions: { id: string }[] };
    expect(snapshot.v).toBe(1);
    expect(snapshot.sessions.length).toBeGreaterThan(4000); // more than one slice of 1,000
    expect(new Set(snapshot.sessions.map((e) => e.id)).size).toBe(snapshot.sessions.length);
    const reopened = await SessionIndex.open(dir);
    expect(ids.filter((id) => !reopened.has(id))).toEqual([]);
    expect(reopened.list()).toHaveLength(9001);
  });

  it('gives calls that arrive together one line and one fsync between them, and replays them all', async () => {
    const dir = await temp();
    const index = await SessionIndex.open(dir);
    const ids = Array.from({ length: 8 }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id) => index.seen(id, 'chat')));
    const lines = (await readFile(join(dir, 'sessions-journal.jsonl'), 'utf8')).trim().split('\n');
    // all eight were noted before the write started: one line (it was eight lines and eight fsyncs)
    expect(lines).toHaveLength(1);
    const reopened = await SessionIndex.open(dir);
    expect(ids.filter((id) => !reopened.has(id))).toEqual([]);
  });

  it('pages most recently used first, through ties of one millisecond, each entry once, as it was before a reopen', async () => {
    const dir = await temp();
    // many notes per millisecond: ties of lastSeen, ordered by id
    const index = await SessionIndex.open(dir);
    const ids = Array.from({ length: 1200 }, (_, i) => `p${i}`);
    for (const id of ids) await index.seen(id, Number(id.slice(1)) % 3 === 0 ? 'telegram' : 'chat');
    await index.seen('p5', 'chat'); // used again: first now
    const walk = (from: SessionIndex, query: { limit: number; platform?: string }) => {
      const got: string[] = [];
      let page = from.page(query);
      for (;;) {
        got.push(...page.sessions.map((e) => e.id));
        if (page.next === undefined) return { got, total: page.total };
        page = from.page({ ...query, before: page.next });
      }
    };
    const all = walk(index, { limit: 97 });
    expect(all.total).toBe(1200);
    expect(all.got[0]).toBe('p5');
    expect(all.got).toHaveLength(1200);
    expect(new Set(all.got).size).toBe(1200);
    // most recent first: the same order as a sort of the whole index by (lastSeen, id)
    const sorted = index.list().map((e) => e.id);
    expect(all.got).toEqual(sorted);
    const byKey = [...index.list()].sort((a, b) => (a.lastSeen === b.lastSeen ? (a.id < b.id ? 1 : -1) : a.lastSeen < b.lastSeen ? 1 : -1)).map((e) => e.id);
    expect(all.got).toEqual(byKey);
    // one platform's: only its entries, its count; no `next` after its last one
    const telegram = walk(index, { limit: 100, platform: 'telegram' });
    expect(telegram.total).toBe(400);
    expect(telegram.got).toEqual(all.got.filter((id) => Number(id.slice(1)) % 3 === 0));
    expect(index.page({ limit: 400, platform: 'telegram' }).next).toBeUndefined();
    expect(index.page({ limit: 5, platform: 'nobody' })).toEqual({ sessions: [], total: 0 });
    // a cursor is a place, not an entry: the entry it came from used again meanwhile is not met twice
    const first = index.page({ limit: 10 });
    await index.seen(first.sessions.at(-1)!.id, 'chat');
    expect(index.page({ limit: 10, before: first.next! }).sessions.map((e) => e.id)).toEqual(all.got.slice(10, 20));
    const reopened = await SessionIndex.open(dir);
    expect(walk(reopened, { limit: 500 }).got).toEqual(index.list().map((e) => e.id));
  });
});

// GET /api/sessions lists a page, most recently used first: it read every known conversation's file
// and held each in memory (2,000 stalled the daemon 110 ms, found by an attack, h105; a daemon that
// has seen 100,000 would read 100,000 files at each refresh of the console). A real daemon over an
// index of 2,500 conversations of two platforms, all seen in one millisecond (ties of lastSeen).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const COUNT = 2500;
const platformOf = (i: number) => (i % 5 === 0 ? 'telegram' : 'chat');

describe('aalis serve: the conversations listed a page at a time', () => {
  const dir = deploymentDir({ owners: { chat: ['alice'] } });
  let daemon: ServeProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the most recent page, its total and where the next starts; a walk of the pages meets each conversation once; an adapter sees its platform only', async () => {
    mkdirSync(join(dir, 'data', 'daemon'), { recursive: true, mode: 0o700 });
    const at = new Date(Date.now() - 60_000).toISOString();
    const sessions = Array.from({ length: COUNT }, (_, i) => ({ id: `${platformOf(i)}:c${i}`, platform: platformOf(i), firstSeen: at, lastSeen: at }));
    writeFileSync(join(dir, 'data', 'daemon', 'sessions.json'), JSON.stringify({ v: 1, sessions }), { mode: 0o600 });
    daemon = await startServe(dir);

    // a call in an old conversation brings it to the front
    const used = await daemon.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: '.' }, turn: ownerTurn('chat:c7') });
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    const first = await daemon.api('GET', '/api/sessions');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.sessions).toHaveLength(200);
    expect(first.body.total).toBe(COUNT);
    expect(first.body.sessions[0]).toMatchObject({ id: 'chat:c7', settings: expect.any(Object), pending: 0, grants: 0 });
    expect(typeof first.body.next).toBe('string');

    const walk = async (token?: string) => {
      const ids: string[] = [];
      let next: string | undefined;
      do {
        const page = await daemon!.api('GET', `/api/sessions?limit=1000${next !== undefined ? `&before=${encodeURIComponent(next)}` : ''}`, undefined, token);
        expect(page.status, JSON.stringify(page.body).slice(0, 300)).toBe(200);
        expect(page.body.sessions.length).toBeLessThanOrEqual(1000);
        ids.push(...page.body.sessions.map((s: { id: string }) => s.id));
        next = page.body.next;
      } while (next !== undefined);
      return ids;
    };
    const all = await walk();
    expect(all).toHaveLength(COUNT);
    expect(new Set(all).size).toBe(COUNT);
    expect(all[0]).toBe('chat:c7');

    const token = (await daemon.api('POST', '/api/adapters', { name: 'tg', platform: 'telegram' })).body.token as string;
    const theirs = await walk(token);
    expect(theirs).toEqual(all.filter((id) => id.startsWith('telegram:')));
    expect((await daemon.api('GET', '/api/sessions', undefined, token)).body.total).toBe(COUNT / 5);
  });

  it.each([
    ['limit=0', /limit must be a whole number from 1 to 1000 \(got '0'\); nothing was listed/],
    ['limit=1001', /limit must be a whole number from 1 to 1000/],
    ['limit=abc', /limit must be a whole number/],
    ['limit=1e3', /limit must be a whole number from 1 to 1000 \(got '1e3'\)/],
    ['limit=0x10', /limit must be a whole number/],
    ['limit=%205', /limit must be a whole number/],
    ['before=not-a-cursor', /before must be the 'next' of a previous page of GET \/api\/sessions \(got 'not-a-cursor'\)/],
    [`before=${Buffer.from('[1,2]').toString('base64url')}`, /before must be the 'next' of a previous page/],
  ])('refuses %s with a 400 that says what it takes', async (query, message) => {
    const r = await daemon!.api('GET', `/api/sessions?${query}`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('bad-request');
    expect(r.body.error.message).toMatch(message);
  });
});

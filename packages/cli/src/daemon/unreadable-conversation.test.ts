// A conversation whose stored file cannot be read (cut short, edited by hand) is said as such, with
// the file to move aside, and the other conversations are still listed: one truncated file answered
// GET /api/sessions 500 to the console and every adapter, and each turn of that conversation a bare
// "Expected double-quoted property name in JSON at position 50" (found by an attack, h105). A real
// daemon, restarted over its data with one conversation's file cut short.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, type ServeProcess, serveOnce, startServe } from './serve-process.testing.js';

const TG = { platform: 'telegram', userId: 'tg-bob' };
const telegramTurn = (id: string) => ({ session: { id }, platform: 'telegram', speaker: TG, authorised: TG, inbound: { id: `m-${Date.now()}` }, category: 'own' as const });
const fileOf = (dir: string, id: string) => join(dir, 'data', 'sessions', `session-${createHash('sha256').update(id).digest('hex').slice(0, 32)}.json`);

describe('aalis serve: a conversation whose file cannot be read', () => {
  const dir = deploymentDir({ owners: { chat: ['alice'] } });
  let daemon: ServeProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is said with its file and the way out, and the other conversations are listed all the same', async () => {
    daemon = await startServe(dir);
    const token = (await daemon.api('POST', '/api/adapters', { name: 'tg', platform: 'telegram' })).body.token as string;
    const say = (id: string) => daemon!.api('POST', '/api/turns', { turn: telegramTurn(id), message: 'hello', reply: false }, token);
    expect((await say('telegram:broken')).status).toBe(200);
    expect((await say('telegram:fine')).status).toBe(200);
    await daemon.stop();
    const file = fileOf(dir, 'telegram:broken');
    writeFileSync(file, readFileSync(file).subarray(0, 50));
    daemon = await startServe(dir);

    for (const as of [token, undefined]) {
      const list = await daemon.api('GET', '/api/sessions', undefined, as);
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      expect(list.body.sessions.map((s: { id: string }) => s.id)).toEqual(['telegram:fine']);
      expect(list.body.unreadable).toHaveLength(1);
      expect(list.body.unreadable[0]).toMatchObject({ id: 'telegram:broken', platform: 'telegram' });
      expect(list.body.unreadable[0].message).toContain(`${file.split('/').pop()} in the data directory's sessions folder`);
    }
    const turn = await say('telegram:broken');
    expect(turn.status).toBe(500);
    expect(turn.body.error.message).toMatch(/cannot be read .*Move that file out of the data directory's sessions folder/);
    // the way out said works: the file moved aside, the conversation starts afresh
    renameSync(file, `${file}.broken`);
    expect((await say('telegram:broken')).status).toBe(200);
    expect((await daemon.api('GET', '/api/sessions', undefined, token)).body.unreadable).toBeUndefined();
  });
});

// A document of the daemon's cut short (the conversation index's snapshot, the remembered grants)
// stopped the start with a bare "Unterminated string in JSON at position 14466", naming no file
// (found by an attack, h105): the start now names the file and the way out, and the way out works.
describe('aalis serve: a document of its data directory cut short', () => {
  const dir = deploymentDir({ owners: { chat: ['alice'] } });
  let daemon: ServeProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['daemon/sessions.json', /the conversation index cannot be read/],
    ['approval/grants.json', /the remembered grants cannot be read/],
  ])('%s: the start names it and says to move it aside, and then starts', async (name, says) => {
    daemon = await startServe(dir);
    const token = (await daemon.api('POST', '/api/adapters', { name: `tg-${name.length}`, platform: 'telegram' })).body.token as string;
    expect((await daemon.api('POST', '/api/turns', { turn: telegramTurn('telegram:kept'), message: 'hello', reply: false }, token)).status).toBe(200);
    await daemon.stop();
    daemon = undefined;
    const file = join(dir, 'data', name);
    expect(existsSync(file)).toBe(false); // written on a compaction or a remembered grant: this one is made by hand, as cut short
    writeFileSync(file, '{"v":1,"sessions":[{"id":"telegram:kept","platform":"tele', { mode: 0o600 });
    const refused = await serveOnce(['--dir', dir, '--port', '0']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(says);
    expect(refused.stderr).toContain(`${file} is not valid JSON`);
    expect(refused.stderr).toContain(`Move ${file} aside and start again`);
    renameSync(file, `${file}.cut`);
    daemon = await startServe(dir);
    expect((await daemon.api('POST', '/api/turns', { turn: telegramTurn('telegram:kept'), message: 'again', reply: false }, token)).status).toBe(200);
    expect((await daemon.api('GET', '/api/sessions', undefined, token)).body.sessions.map((s: { id: string }) => s.id)).toContain('telegram:kept');
    await daemon.stop();
    daemon = undefined;
  });
});

// A conversation the kernel holds but the conversation index lacks (a daemon killed between the
// two writes left one; found by an attack, h99: its own adapter was refused it for good, as a
// conversation of no platform's) is noted again from its own record, the platform of the person it
// was opened for, when it is next touched; one the owner opened stays the owner's. A real daemon,
// restarted over its data with the index taken away.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const TG = { platform: 'telegram', userId: 'tg-bob' };
const telegramTurn = (id: string) => ({ session: { id }, platform: 'telegram', speaker: TG, authorised: TG, inbound: { id: `m-${Date.now()}` }, category: 'own' as const });

describe('aalis serve: a conversation the index lost', () => {
  const dir = deploymentDir({ owners: { chat: ['alice'] } });
  let daemon: ServeProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is its own platform's again when next touched, and never another platform's", async () => {
    daemon = await startServe(dir);
    const token = (await daemon.api('POST', '/api/adapters', { name: 'tg', platform: 'telegram' })).body.token as string;
    const call = (d: ServeProcess, turn: unknown, as?: string) => d.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: dir }, turn }, as);
    expect((await call(daemon, telegramTurn('telegram:mine'), token)).status).toBe(200);
    expect((await call(daemon, ownerTurn('telegram:owners'))).status).toBe(200);
    await daemon.stop();
    // as a kill between the kernel's write and the index's would leave them: both conversations on disk, the index without them
    for (const name of ['sessions.json', 'sessions-journal.jsonl']) rmSync(join(dir, 'data', 'daemon', name), { force: true });
    daemon = await startServe(dir);
    expect((await daemon.api('GET', '/api/sessions', undefined, token)).body.sessions).toEqual([]);
    const again = await call(daemon, telegramTurn('telegram:mine'), token);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((await daemon.api('GET', '/api/sessions', undefined, token)).body.sessions.map((s: { id: string }) => s.id)).toEqual(['telegram:mine']);
    // the owner's, though named as the adapter's would be, was opened for the owner (chat:alice): not the adapter's
    const owners = await call(daemon, telegramTurn('telegram:owners'), token);
    expect(owners.status).toBe(403);
    expect((await call(daemon, ownerTurn('telegram:owners'))).status).toBe(200);
  });
});

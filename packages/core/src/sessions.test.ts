import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createKernel } from './kernel.js';
import { definePlugin } from './plugin.js';
import type { SettingsChangedEvent } from './sessions.js';
import { Sessions, sessions } from './sessions.js';
import { DurableStore } from './store.js';
import { createHash } from 'node:crypto';
import { sessionsPlugin } from './sessions-plugin.js';
import { SessionError } from './session-error.js';
import { DEFAULT_SETTINGS } from './settings.js';

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function start(dataDir?: string) {
  const events: SettingsChangedEvent[] = [];
  const kernel = createKernel(dataDir ? { dataDir } : {})
    .use(sessionsPlugin)
    .use(definePlugin({ name: 'listener', inject: [sessions], apply: (ctx) => ctx.on('session/settings-changed', (e) => void events.push(e)) }));
  await kernel.start();
  return { kernel, service: kernel.get(sessions), events };
}

describe('sessions', () => {
  it('a new conversation inherits the last used settings', async () => {
    const { service } = await start();
    expect(await service.settings('a')).toEqual(DEFAULT_SETTINGS);
    await service.change('a', { tier: 'readonly', boundary: 'deny' });
    expect(await service.settings('b')).toMatchObject({ tier: 'readonly', boundary: 'deny' });
    expect(await service.settings('a')).toMatchObject({ tier: 'readonly' });
  });

  it("one person's settings are never another person's starting point", async () => {
    const { service } = await start();
    await service.open('alice-dm', { scope: 'qq:alice' });
    await service.change('alice-dm', { tier: 'full' });
    expect(await service.settings('alice-later', { scope: 'qq:alice' })).toMatchObject({ tier: 'full' });
    expect(await service.settings('group-chat', { scope: 'qq:bob' })).toEqual(DEFAULT_SETTINGS);
    expect(service.lastUsed('qq:bob')).toEqual(DEFAULT_SETTINGS);
    expect(service.lastUsed()).toEqual(DEFAULT_SETTINGS);
  });

  it('a change is the last used of the person who made it, not of the person who started the conversation', async () => {
    const { service } = await start();
    await service.open('bob-dm', { scope: 'qq:bob' });
    await service.change('bob-dm', { tier: 'full', approver: 'none' }, { by: 'qq:alice' });
    expect(service.lastUsed('qq:alice')).toMatchObject({ tier: 'full', approver: 'none' });
    expect(service.lastUsed('qq:bob')).toEqual(DEFAULT_SETTINGS);
    expect(await service.settings('bob-later', { scope: 'qq:bob' })).toEqual(DEFAULT_SETTINGS);
    expect(await service.settings('alice-later', { scope: 'qq:alice' })).toMatchObject({ tier: 'full' });
  });

  it("a child opened before its root puts the root in the child's scope, not the shared one", async () => {
    const { service } = await start();
    await service.open('alice-dm', { scope: 'qq:alice' });
    await service.change('alice-dm', { tier: 'full' });
    await service.open('bob-child', { rootId: 'bob-root', scope: 'qq:bob' });
    expect((await service.settings('bob-root')).tier).toBe('workspace');
    await service.change('bob-child', { tier: 'readonly' });
    expect(service.lastUsed('qq:bob').tier).toBe('readonly');
    expect(service.lastUsed('qq:alice').tier).toBe('full');
    expect(service.lastUsed()).toEqual(DEFAULT_SETTINGS);
    expect(service.lastUsedByScope()).toEqual({ 'qq:alice': expect.objectContaining({ tier: 'full' }), 'qq:bob': expect.objectContaining({ tier: 'readonly' }) });
    expect(await service.has('bob-root')).toBe(true);
    expect(await service.has('nobody')).toBe(false);
  });

  it('a child session takes its root session settings, now and after a change', async () => {
    const { service } = await start();
    await service.open('root');
    await service.open('child', { rootId: 'root' });
    await service.change('root', { tier: 'full' });
    expect((await service.settings('child')).tier).toBe('full');
    await service.change('child', { tier: 'confirm' });
    expect((await service.settings('root')).tier).toBe('confirm');
  });

  it("a turn naming another conversation's root is refused; the root a child was opened with stays its root", async () => {
    const { service } = await start();
    await service.open('r');
    await service.change('r', { tier: 'readonly' });
    await service.open('x');
    await expect(service.open('x', { rootId: 'r' })).rejects.toMatchObject({ code: 'root-mismatch' });
    await expect(service.rootOf('x', { claimed: 'r' })).rejects.toBeInstanceOf(SessionError);
    expect(await service.rootOf('x')).toBe('x');
    await service.open('child', { rootId: 'r' });
    expect(await service.rootOf('child', { claimed: 'r' })).toBe('r');
    await expect(service.open('child', { rootId: 'x' })).rejects.toMatchObject({ code: 'root-mismatch', message: expect.stringContaining("belongs to 'r'") });
    // a new child named with its root by its first turn is made so
    expect(await service.rootOf('child2', { claimed: 'r' })).toBe('r');
    expect(await service.settings('child2')).toMatchObject({ tier: 'readonly' });
  });

  it('a child of a child is refused before anything is made; a chain kept from before is ruled by its top', async () => {
    const { service } = await start();
    await service.open('gc-A');
    await service.open('gc-B', { rootId: 'gc-A' });
    await service.change('gc-A', { tier: 'readonly', boundary: 'deny' });
    // found by an attack: C rooted at B took B's own (never changed) settings, not A's
    await expect(service.open('gc-C', { rootId: 'gc-B' })).rejects.toMatchObject({ code: 'root-mismatch', message: expect.stringContaining("'gc-B' is not a root conversation: it belongs to 'gc-A'") });
    await expect(service.rootOf('gc-C', { claimed: 'gc-B' })).rejects.toMatchObject({ code: 'root-mismatch' });
    expect(await service.has('gc-C')).toBe(false);
    // a chain written before the check (a record of C naming B as its root) takes A's settings and root
    const dir = await mkdtemp(join(tmpdir(), 'aalis-sessions-chain-'));
    dirs.push(dir);
    const store = await DurableStore.open(dir);
    const old = new Sessions(store);
    await old.open('A');
    await old.open('B', { rootId: 'A' });
    await old.change('A', { tier: 'readonly', boundary: 'deny' });
    await store.write(`session-${createHash('sha256').update('C').digest('hex').slice(0, 32)}`, { id: 'C', rootId: 'B', settings: { ...DEFAULT_SETTINGS, tier: 'full' }, history: [], context: { messages: [], notes: [] } });
    expect(await old.settings('C')).toMatchObject({ tier: 'readonly', boundary: 'deny' });
    expect(await old.rootOf('C')).toBe('A');
    await expect(old.rootOf('C', { claimed: 'B' })).rejects.toMatchObject({ code: 'root-mismatch' });
  });

  it('two opens of one new conversation at once share one record: a second claim of another root is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-sessions-race-'));
    dirs.push(dir);
    const service = new Sessions(await DurableStore.open(dir));
    await service.open('race-A');
    await service.open('race-B');
    await service.change('race-A', { tier: 'readonly', boundary: 'deny' });
    for (let i = 0; i < 20; i++) {
      const [a, b] = await Promise.allSettled([service.open(`race-X${i}`, { rootId: 'race-A' }), service.open(`race-X${i}`, { rootId: 'race-B' })]);
      // found by an attack: both resolved, each with its own record, and the last one kept ruled the calls
      expect([a.status, b.status].sort()).toEqual(['fulfilled', 'rejected']);
      const won = a.status === 'fulfilled' ? 'race-A' : 'race-B';
      expect(await service.rootOf(`race-X${i}`)).toBe(won);
      expect((await new Sessions(await DurableStore.open(dir)).peek(`race-X${i}`))?.rootId).toBe(won);
    }
  });

  it('emits settings-changed with previous and next', async () => {
    const { service, events } = await start();
    await service.change('a', { runMode: 'plan' });
    expect(events).toEqual([
      { sessionId: 'a', previous: DEFAULT_SETTINGS, next: { ...DEFAULT_SETTINGS, runMode: 'plan', tier: 'readonly', boundary: 'deny', restore: { tier: 'workspace', boundary: 'ask' } } },
    ]);
  });

  it('a refused change changes nothing and emits nothing', async () => {
    const { service, events } = await start();
    await service.change('a', { runMode: 'plan' });
    const refused = await service.change('a', { tier: 'full' });
    expect(refused.ok).toBe(false);
    expect((await service.settings('a')).tier).toBe('readonly');
    expect(events).toHaveLength(1);
  });

  it('rejects a malformed change with the field', async () => {
    const { service } = await start();
    await expect(service.change('a', { tier: 'root' as never })).rejects.toThrow(/tier: expected one of/);
  });

  it('history and context are kernel data: snapshots are frozen copies and the fingerprint follows changes', async () => {
    const { service } = await start();
    await service.append('a', { role: 'user', content: 'hello' });
    const before = await service.fingerprint('a');
    const snapshot = await service.get('a');
    expect(Object.isFrozen(snapshot.history)).toBe(true);
    expect(() => (snapshot.history as unknown[]).push({})).toThrow();
    expect(await service.fingerprint('a')).toBe(before);
    await service.setContext('a', { messages: [], notes: ['summary'] });
    expect(await service.fingerprint('a')).not.toBe(before);
  });

  it("appends to the model context with the history, except a note for people only", async () => {
    const { service } = await start();
    await service.append('ctx', { role: 'user', content: 'hello' });
    await service.append('ctx', { role: 'system', content: 'the model could not answer' }, { historyOnly: true });
    const { history, context } = await service.get('ctx');
    expect(history.map((m) => m.content)).toEqual(['hello', 'the model could not answer']);
    expect(context.messages.map((m) => m.content)).toEqual(['hello']);
  });

  it('peek reads a conversation without creating one', async () => {
    const { service } = await start();
    expect(await service.peek('never-opened')).toBeUndefined();
    expect(await service.peek('never-opened')).toBeUndefined();
    await service.append('opened', { role: 'user', content: 'hi' });
    expect((await service.peek('opened'))?.history).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('persists settings, history and the last used settings across a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-sessions-'));
    dirs.push(dir);
    const first = await start(dir);
    await first.service.change('a', { tier: 'full', approver: 'reviewer' });
    await first.service.append('a', { role: 'user', content: 'kept' });
    await first.kernel.stop();
    const second = await start(dir);
    expect(await second.service.settings('a')).toMatchObject({ tier: 'full', approver: 'reviewer' });
    expect((await second.service.get('a')).history).toEqual([{ role: 'user', content: 'kept' }]);
    expect(await second.service.settings('fresh')).toMatchObject({ tier: 'full', approver: 'reviewer' });
  });

  // Two ids that differ only in a lone UTF-16 surrogate (JSON carries it) have the same UTF-8 form
  // (U+FFFD): stored by that form they shared one file, so after a restart one conversation opened
  // with the other's history, context and settings.
  it('an id that is not well-formed Unicode is refused, and a stored record under another id is never taken for this one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-sessions-'));
    dirs.push(dir);
    const first = await start(dir);
    await expect(first.service.open('g\ud800')).rejects.toThrow(/session id 'g\\ud800' is not well-formed Unicode/);
    await expect(first.service.append('g\udc00', { role: 'user', content: 'x' })).rejects.toThrow(/not well-formed Unicode/);
    await first.service.append('private', { role: 'user', content: 'only mine' });
    await first.kernel.stop();
    // a file that holds another conversation's record (planted, or written by an older daemon under a colliding name)
    const { readdir, copyFile } = await import('node:fs/promises');
    const files = (await readdir(join(dir, 'sessions'), { recursive: true })).map(String);
    const own = files.find((f) => f.includes('session-'));
    expect(own).toBeDefined();
    const { createHash } = await import('node:crypto');
    const other = `session-${createHash('sha256').update('public').digest('hex').slice(0, 32)}`;
    await copyFile(join(dir, 'sessions', own!), join(dir, 'sessions', own!.replace(/session-[0-9a-f]{32}/, other)));
    const second = await start(dir);
    await expect(second.service.get('public')).rejects.toThrow(/holds conversation 'private', not 'public'/);
    expect((await second.service.get('private')).history).toEqual([{ role: 'user', content: 'only mine' }]);
  });
});

// Each message rewrote the whole record on the daemon's thread: a hundred 1 MB messages to one
// conversation stalled every client for seconds at each new one (found by an attack, h105). Past
// its bound a person's next message moves the oldest messages to an archive, appended only.
describe('a conversation past its bound', () => {
  const big = (n: number) => `${n} ${'x'.repeat(2000)}`;

  it('archives its oldest messages at a person\'s message, loses none, and the model context starts at a person\'s message', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-sessions-bound-'));
    dirs.push(dir);
    const store = await DurableStore.open(dir);
    const service = new Sessions(store, () => {}, 64 * 1024);
    const sent: string[] = [];
    for (let i = 0; i < 200; i++) {
      await service.append('c', { role: 'user', content: big(i) });
      sent.push(big(i));
      await service.append('c', { role: 'assistant', content: `reply ${i}`, toolCalls: [{ id: `t${i}`, name: 'list_dir', arguments: '{}' }] });
      await service.append('c', { role: 'tool', toolCallId: `t${i}`, content: big(i) });
    }
    const conversation = await service.get('c');
    const file = join(dir, `session-${createHash('sha256').update('c').digest('hex').slice(0, 32)}`);
    const { stat, readFile } = await import('node:fs/promises');
    // the record stays bounded: written whole at each message, never more than the bound and a turn
    expect((await stat(`${file}.json`)).size).toBeLessThan(2 * 64 * 1024);
    expect(conversation.context.messages[0]?.role).toBe('user');
    expect(conversation.history.length).toBeLessThan(600);
    // nothing lost: the archive and the record together hold every message, in order
    const archived = (await readFile(`${file}-archive.jsonl`, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => (JSON.parse(l) as { messages: { role: string; content: string }[] }).messages);
    const all = [...archived, ...conversation.history];
    expect(all).toHaveLength(600);
    expect(all.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(sent);
    // read again from the store, it goes on from what it holds
    const again = new Sessions(store, () => {}, 64 * 1024);
    expect((await again.get('c')).history).toEqual(conversation.history);
  });

  it('a turn is never cut mid-way: the agent\'s own messages do not archive', async () => {
    const service = new Sessions(undefined, () => {}, 64 * 1024);
    await service.append('d', { role: 'user', content: 'go' });
    for (let i = 0; i < 100; i++) await service.append('d', { role: 'tool', toolCallId: `t${i}`, content: big(i) });
    const conversation = await service.get('d');
    expect(conversation.context.messages).toHaveLength(101);
    expect(conversation.context.messages[0]).toMatchObject({ role: 'user', content: 'go' });
  });
});

describe('sessions held in memory', () => {
  it('keeps at most its bound once no call is under way; a dropped conversation is read again whole, settings and all', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-resident-'));
    dirs.push(dir);
    const service = new Sessions(await DurableStore.open(dir), () => {}, 64 * 1024, 4);
    for (let i = 0; i < 20; i++) {
      await service.append(`r${i}`, { role: 'user', content: `hello ${i}` });
      await service.change(`r${i}`, { tier: i % 3 === 0 ? 'readonly' : DEFAULT_SETTINGS.tier });
    }
    expect(service.residentCount).toBe(4);
    for (let i = 0; i < 20; i++) {
      expect((await service.get(`r${i}`)).history.map((m) => m.content)).toEqual([`hello ${i}`]);
      expect((await service.settings(`r${i}`)).tier).toBe(i % 3 === 0 ? 'readonly' : DEFAULT_SETTINGS.tier);
    }
    expect(service.residentCount).toBe(4);
  });

  it('loses no message of a call whose write is slow while others come and go (a record is never dropped under a call)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-resident-'));
    dirs.push(dir);
    const store = await DurableStore.open(dir);
    const service = new Sessions(store, () => {}, 64 * 1024, 1);
    await service.append('x', { role: 'user', content: 'first' });
    await service.append('y', { role: 'user', content: 'other' });
    const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    // every write from now on takes 50 ms: a call is under way that long after it changed its record
    const write = store.write.bind(store);
    store.write = async (name, value) => {
      await later(50);
      return write(name, value);
    };
    const a = service.append('x', { role: 'user', content: 'A' });
    await later(10);
    // another conversation read while A's write is slow: were x dropped now, B would read x's file
    // without A's message, and its write (after A's) would put that file back without it
    await service.get('y');
    const b = service.append('x', { role: 'user', content: 'B' });
    await Promise.all([a, b]);
    const fresh = new Sessions(await DurableStore.open(dir));
    expect((await fresh.get('x')).history.map((m) => m.content)).toEqual(['first', 'A', 'B']);
  });

  it('keeps to its bound while calls overlap without end: only the conversations a call holds stay past it (h107)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-resident-'));
    dirs.push(dir);
    const store = await DurableStore.open(dir);
    const service = new Sessions(store, () => {}, 64 * 1024, 2);
    for (let i = 0; i < 20; i++) await service.append(`o${i}`, { role: 'user', content: `o${i}` });
    await service.append('x', { role: 'user', content: 'first' });
    // x's next write is held until released: a call is under way all the while
    let release = () => {};
    const write = store.write.bind(store);
    store.write = async (name, value) => {
      if ((value as { id?: string }).id === 'x') await new Promise<void>((resolve) => (release = resolve));
      return write(name, value);
    };
    const slow = service.append('x', { role: 'user', content: 'A' });
    // twenty conversations read one after another, each call ended, while x's call is still under way
    for (let i = 0; i < 20; i++) await service.get(`o${i}`);
    // x (held by its call) and the bound's two: every one read was kept while any call was under way
    expect(service.residentCount).toBeLessThanOrEqual(3);
    release();
    await slow;
    expect(service.residentCount).toBeLessThanOrEqual(2);
    expect((await service.get('x')).history.map((m) => m.content)).toEqual(['first', 'A']);
    expect((await new Sessions(await DurableStore.open(dir)).get('x')).history.map((m) => m.content)).toEqual(['first', 'A']);
  });

  it("gives a dropped conversation's settings, and a child's from its root, without reading its record again (h107)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-resident-'));
    dirs.push(dir);
    const store = await DurableStore.open(dir);
    const service = new Sessions(store, () => {}, 64 * 1024, 2);
    for (let i = 0; i < 10; i++) {
      await service.open(`h${i}`);
      await service.open(`h${i}-child`, { rootId: `h${i}` });
      await service.append(`h${i}`, { role: 'user', content: 'x'.repeat(1000) });
      await service.change(`h${i}-child`, { tier: i % 2 === 0 ? 'readonly' : DEFAULT_SETTINGS.tier });
    }
    let reads = 0;
    const read = store.read.bind(store);
    store.read = ((name: string, schema?: never) => {
      reads++;
      return read(name, schema);
    }) as typeof store.read;
    for (let i = 0; i < 10; i++) {
      expect((await service.settings(`h${i}`)).tier).toBe(i % 2 === 0 ? 'readonly' : DEFAULT_SETTINGS.tier);
      expect((await service.settings(`h${i}-child`)).tier).toBe(i % 2 === 0 ? 'readonly' : DEFAULT_SETTINGS.tier);
    }
    expect(reads).toBe(0);
    // a change made after the record was dropped is the one given
    await service.change('h0-child', { tier: DEFAULT_SETTINGS.tier });
    expect((await service.settings('h0')).tier).toBe(DEFAULT_SETTINGS.tier);
    expect((await new Sessions(await DurableStore.open(dir)).settings('h0-child')).tier).toBe(DEFAULT_SETTINGS.tier);
  });

  it('keeps every conversation without a store: memory is all there is', async () => {
    const service = new Sessions(undefined, () => {}, 64 * 1024, 2);
    for (let i = 0; i < 6; i++) await service.append(`m${i}`, { role: 'user', content: `m${i}` });
    expect(service.residentCount).toBe(6);
    expect((await service.get('m0')).history).toHaveLength(1);
  });
});

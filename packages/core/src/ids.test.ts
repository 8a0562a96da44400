// The one rule for ids (well-formed.ts `idProblem`), table-driven, and where it is applied: a
// turn's ids (the schema the daemon parses every turn with) and the sessions service.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableStore } from './store.js';
import { Sessions } from './sessions.js';
import { IdentitySchema, OriginTurnSchema } from './turn.js';
import { idProblem, MAX_ID_BYTES } from './well-formed.js';

const fine = ['a', 'cli', 'telegram:123456789', 'console-1733550000000-abc', 'chat-odd-paths', 'aalis-unauthenticated', 'unauthenticated speaker', 'Ω:日本語', '😀'.repeat(64), 'x'.repeat(MAX_ID_BYTES), 'tab\u00a0nbsp'];
const refused: [string, string, RegExp][] = [
  ['one byte too long', 'x'.repeat(MAX_ID_BYTES + 1), /is 257 bytes in UTF-8, over the 256/],
  ['too long in UTF-8, short in UTF-16', 'é'.repeat(129), /is 258 bytes in UTF-8/],
  ['a megabyte', `telegram:${'x'.repeat(1 << 20)}`, /over the 256/],
  ['a lone surrogate', 'g\ud800', /not well-formed Unicode/],
  ['NUL', 'a\u0000b', /U\+0000, a control, formatting or invisible character/],
  ['newline', 'a\nb', /U\+000A/],
  ['unit separator', 'a\u001fb', /U\+001F/],
  ['DEL', 'a\u007f', /U\+007F/],
  ['a C1 control', 'a\u0085', /U\+0085/],
  ['the last C1 control', 'a\u009f', /U\+009F/],
  ['a left-to-right mark', 'a\u200e', /U\+200E/],
  ['a right-to-left mark', 'a\u200f', /U\+200F/],
  ['an embedding', '\u202aa', /U\+202A/],
  ['a right-to-left override', 'telegram:\u202ecli', /U\+202E/],
  ['an isolate', 'a\u2066', /U\+2066/],
  ['a pop isolate', 'a\u2069', /U\+2069/],
  // what shows as nothing, so `telegram:cli` and it read the same (found by an attack)
  ['a zero-width space', 'telegram:cli\u200b', /U\+200B/],
  ['a zero-width joiner', 'a\u200db', /U\+200D/],
  ['an Arabic letter mark', 'a\u061c', /U\+061C/],
  ['a line separator', 'a\u2028', /U\+2028/],
  ['a word joiner', 'a\u2060', /U\+2060/],
  ['a byte order mark', '\ufeffa', /U\+FEFF/],
  ['a tag character', 'a\u{e0041}', /U\+E0041/],
];

describe('idProblem', () => {
  it.each(fine)('takes %j', (id) => {
    expect(idProblem(id)).toBeUndefined();
  });
  it.each(refused)('refuses %s', (_, id, rule) => {
    expect(idProblem(id)).toMatch(rule);
  });
});

describe('the rule where ids come in', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it.each(refused)('a turn whose ids break it is refused by the schema: %s', (_, id, rule) => {
    const turn = { session: { id: 's' }, platform: 'telegram', speaker: { platform: 'telegram', userId: 'u' }, authorised: null, inbound: { id: 'm' }, category: 'own' };
    expect(OriginTurnSchema.safeParse(turn).success).toBe(true);
    for (const bad of [{ ...turn, session: { id } }, { ...turn, session: { id: 's', rootId: id } }, { ...turn, speaker: { platform: 'telegram', userId: id } }, { ...turn, platform: id }]) {
      const parsed = OriginTurnSchema.safeParse(bad);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(rule);
    }
    expect(IdentitySchema.safeParse({ platform: id, userId: 'u' }).success).toBe(false);
  });

  it('the sessions service opens no conversation whose id breaks it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-ids-'));
    dirs.push(dir);
    const sessions = new Sessions(await DurableStore.open(dir));
    for (const [, id, rule] of refused) {
      await expect(sessions.open(id)).rejects.toThrow(rule);
      await expect(sessions.append(id, { role: 'user', content: 'x' })).rejects.toThrow(rule);
    }
    await expect(sessions.open('telegram:\u202ecli')).rejects.toThrow(/session id 'telegram:\\u202ecli' holds U\+202E/);
    await sessions.append('x'.repeat(MAX_ID_BYTES), { role: 'user', content: 'kept' });
    expect((await sessions.get('x'.repeat(MAX_ID_BYTES))).history).toEqual([{ role: 'user', content: 'kept' }]);
  });
});

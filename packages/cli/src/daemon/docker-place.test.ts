import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claimSpace, legacyUserIdOf, SPACE_IDENTITY_FILE, userIdOf } from './docker-place.js';

const root = mkdtempSync(join(tmpdir(), 'aalis-place-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// The space name must be accepted by DockerDeployment.user (sandbox-docker's USER_ID).
const USER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

describe('userIdOf', () => {
  it('gives identities the old lossy name merged their own spaces', () => {
    type Pair = readonly [{ platform: string; userId: string }, { platform: string; userId: string }];
    const pairs: Pair[] = [
      [
        { platform: 'chat', userId: 'alice@corp' },
        { platform: 'chat', userId: 'alice_corp' },
      ],
      [
        { platform: 'qq', userId: 'a-b' },
        { platform: 'qq-a', userId: 'b' },
      ],
      [
        { platform: 'chat', userId: `${'x'.repeat(70)}1` },
        { platform: 'chat', userId: `${'x'.repeat(70)}2` },
      ],
    ];
    for (const [a, b] of pairs) {
      expect(legacyUserIdOf(a)).toBe(legacyUserIdOf(b)); // the collision the old name had
      expect(userIdOf(a)).not.toBe(userIdOf(b));
      for (const name of [userIdOf(a), userIdOf(b)]) expect(name).toMatch(USER_ID);
    }
  });

  it('keeps a readable prefix and is stable', () => {
    const alice = { platform: 'chat', userId: 'alice@corp' };
    expect(userIdOf(alice)).toMatch(/^chat-alice_corp-[0-9a-f]{32}$/);
    expect(userIdOf(alice)).toBe(userIdOf({ ...alice }));
  });
});

describe('claimSpace', () => {
  it('records the person on first use, accepts them again and refuses anyone else', async () => {
    const space = join(root, 'space');
    mkdirSync(space);
    const alice = { platform: 'chat', userId: 'alice@corp' };
    await claimSpace(space, alice);
    expect(JSON.parse(readFileSync(join(space, SPACE_IDENTITY_FILE), 'utf8'))).toEqual(alice);
    await claimSpace(space, { ...alice });
    await expect(claimSpace(space, { platform: 'chat', userId: 'alice_corp' })).rejects.toMatchObject({ code: 'conflict', fix: expect.stringContaining('move the space aside') });
    await expect(claimSpace(space, null)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('refuses a space whose record cannot be read', async () => {
    const space = join(root, 'broken');
    mkdirSync(space);
    writeFileSync(join(space, SPACE_IDENTITY_FILE), '{not json');
    await expect(claimSpace(space, { platform: 'chat', userId: 'bob' })).rejects.toMatchObject({ code: 'conflict', fix: expect.stringContaining('remove') });
  });
});

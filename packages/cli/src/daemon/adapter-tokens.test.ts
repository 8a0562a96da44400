// Concurrent changes to the adapters' tokens, against the real class over a real store: every
// change answered holds, in memory and after a reopen (a daemon's restart).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurableStore } from '@aalis/core';
import { afterEach, describe, expect, it } from 'vitest';
import { AdapterTokens } from './adapter-tokens.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function open(dir: string): Promise<AdapterTokens> {
  return AdapterTokens.open(await DurableStore.open(join(dir, 'daemon')));
}

describe('AdapterTokens, changed concurrently', () => {
  it('keeps every answered add, remove and replace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-adapter-tokens-'));
    dirs.push(dir);
    const adapters = await open(dir);
    const first = await adapters.add('gone', 'telegram');
    const old = await adapters.add('swapped', 'telegram');

    // all at once: one remove, one replace, and many adds
    const removing = adapters.remove('gone');
    const replacing = adapters.add('swapped', 'telegram', true);
    const adding = Array.from({ length: 20 }, (_, i) => adapters.add(`a${i}`, 'matrix'));
    const [removed, replaced, added] = await Promise.all([removing, replacing, Promise.all(adding)]);

    expect(removed).toBe(true);
    for (const reopened of [adapters, await open(dir)]) {
      expect(reopened.list().map((a) => a.name)).toEqual(['a0', 'a1', 'a10', 'a11', 'a12', 'a13', 'a14', 'a15', 'a16', 'a17', 'a18', 'a19', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'swapped']);
      expect(reopened.match(first.token)).toBeUndefined();
      expect(reopened.match(old.token)).toBeUndefined();
      expect(reopened.match(replaced.token)).toMatchObject({ name: 'swapped' });
      for (const [i, a] of added.entries()) expect(reopened.match(a.token)).toMatchObject({ name: `a${i}`, platform: 'matrix' });
    }
  });

  it('refuses the second of two adds of one name at once, and keeps the first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-adapter-tokens-'));
    dirs.push(dir);
    const adapters = await open(dir);
    const [one, two] = await Promise.allSettled([adapters.add('same', 'telegram'), adapters.add('same', 'telegram')]);
    expect(one.status).toBe('fulfilled');
    expect(two.status).toBe('rejected');
    const token = (one as PromiseFulfilledResult<{ token: string }>).value.token;
    expect((await open(dir)).match(token)).toMatchObject({ name: 'same' });
  });

  it('goes on after a change that failed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-adapter-tokens-'));
    dirs.push(dir);
    const adapters = await open(dir);
    await adapters.add('x', 'telegram');
    const results = await Promise.allSettled([adapters.add('x', 'telegram'), adapters.add('y', 'telegram')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(adapters.list().map((a) => a.name)).toEqual(['x', 'y']);
  });
});

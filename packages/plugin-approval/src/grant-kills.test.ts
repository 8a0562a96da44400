// Audit first, grant second, under real SIGKILLs: a daemon approving with "remember" in a loop
// is killed at random moments; after each restart every grant it honours has the audit line
// that created it, and every grant the audit shows in force is honoured.
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../test/harness.js';
import { killLooperAfter, restartAndCheck } from '../test/kill-rounds.js';

afterAll(removeTempDirs);

const ROUNDS = 4;

describe('a kill -9 while grants are written', () => {
  it('never leaves a grant the audit log does not show', async () => {
    const dir = await tempDir();
    let seen = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await killLooperAfter(dir, 20 + Math.floor(Math.random() * 200));
      const found = await restartAndCheck(dir);
      const unaudited = [...found.honoured].filter(([id]) => !found.audited.has(id));
      expect(unaudited, `round ${round}: grants honoured with no audit line`).toEqual([]);
      expect([...found.honoured.keys()].sort()).toEqual([...found.audited.keys()].sort());
      expect(found.silent).toBe(found.honoured.size);
      seen = found.honoured.size;
    }
    // The rounds did approve things: the check above was not over an empty book.
    expect(seen).toBeGreaterThan(ROUNDS);
  }, 60_000);
});

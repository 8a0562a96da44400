// Audit first, grant second, under real SIGKILLs: a daemon approving with "remember" in a loop
// is killed at random moments; after each restart every grant it honours has the audit line
// that created it, and every grant the audit shows in force is honoured. Three data
// directories run side by side, so the few seconds give twelve random kill points.
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../test/harness.js';
import { killLooperAfter, restartAndCheck } from '../test/kill-rounds.js';

afterAll(removeTempDirs);

const ROUNDS = 4;
const SIDE_BY_SIDE = 3;

async function rounds(lane: number): Promise<number> {
  const dir = await tempDir();
  let seen = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await killLooperAfter(dir, Math.floor(Math.random() * 200));
    const found = await restartAndCheck(dir);
    const unaudited = [...found.honoured].filter(([id]) => !found.audited.has(id));
    expect(unaudited, `lane ${lane}, round ${round}: grants honoured with no audit line`).toEqual([]);
    expect([...found.honoured.keys()].sort(), `lane ${lane}, round ${round}: grants the audit shows but not honoured`).toEqual([...found.audited.keys()].sort());
    expect(found.silent).toBe(found.honoured.size);
    seen = found.honoured.size;
  }
  return seen;
}

describe('a kill -9 while grants are written', () => {
  it('never leaves a grant the audit log does not show', async () => {
    const seen = await Promise.all(Array.from({ length: SIDE_BY_SIDE }, (_, lane) => rounds(lane)));
    // Each round finished at least one grant before its kill: the checks were not over an empty book.
    for (const n of seen) expect(n).toBeGreaterThanOrEqual(ROUNDS);
  }, 120_000);
});

// The long run of src/grant-kills.test.ts: a daemon approving with "remember" in a loop is
// SIGKILLed at random moments, many rounds on one data directory; after each restart every
// honoured grant must have the audit line that created it, and every grant the audit log shows
// in force must be honoured. Usage: tsx bench/grant-kills.ts [ROUNDS] (default 200).
// Not part of `pnpm bench` by default: it measures correctness under kills, not speed.
import { performance } from 'node:perf_hooks';
import { removeTempDirs, tempDir } from '../test/harness.js';
import { killLooperAfter, restartAndCheck } from '../test/kill-rounds.js';

const rounds = Number(process.argv[2] ?? 200);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`ROUNDS must be a whole number above 0 (got '${process.argv[2]}')`);
const dir = await tempDir();
const start = performance.now();
let failures = 0;
let honoured = 0;
for (let round = 0; round < rounds; round++) {
  await killLooperAfter(dir, Math.floor(Math.random() * 300));
  const found = await restartAndCheck(dir);
  const unaudited = [...found.honoured.keys()].filter((id) => !found.audited.has(id));
  const unhonoured = [...found.audited.keys()].filter((id) => !found.honoured.has(id));
  if (unaudited.length > 0 || unhonoured.length > 0 || found.silent !== found.honoured.size) {
    failures++;
    console.error(`round ${round}: honoured without audit ${JSON.stringify(unaudited)}, audited but not honoured ${JSON.stringify(unhonoured)}, silent ${found.silent}/${found.honoured.size}`);
  }
  honoured = found.honoured.size;
  if ((round + 1) % 20 === 0) console.log(`${round + 1}/${rounds} rounds, ${honoured} grants honoured, ${failures} failing rounds`);
}
console.log(`grant kills: ${rounds} rounds in ${((performance.now() - start) / 1000).toFixed(1)} s, ${honoured} grants at the end, ${failures} failing rounds`);
await removeTempDirs();
process.exit(failures === 0 ? 0 : 1);

/*
 * Run by data-dir-lock.test.ts: takes the data directory's lock as a daemon would, says so on
 * stdout (`held <pid>`, or `refused <code>`), and holds it until killed. With a second argument
 * (ms since the epoch) it waits for that moment first. It says `claiming` on stderr as it starts
 * the claim, and a refusal's message there too.
 */
import { claimDataDir } from './data-dir-lock.js';

const at = Number(process.argv[3] ?? 0);
while (Date.now() < at) {
  // busy: the moment matters, not the CPU
}
process.stderr.write('claiming\n');
try {
  claimDataDir(process.argv[2]!);
  process.stdout.write(`held ${process.pid}\n`);
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.stdout.write(`refused ${(e as { code?: string }).code ?? (e as Error).message}\n`);
}
// held until killed, or until its parent is gone: a kill of a wrapper (strace) that does not pass
// the kill on left it holding a lock in a removed folder after the test (one per run of the file)
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 200);

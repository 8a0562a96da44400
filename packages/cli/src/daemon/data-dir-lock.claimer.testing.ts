/*
 * Run by data-dir-lock.test.ts: claims the data directory `argv[2]` `argv[3]` times while another
 * process holds it, and prints one line of JSON: how many claims were refused, by the start of
 * their message, and how many were not refused (which must be none). A claim that blocks keeps
 * this process from printing at all (the test's bound says so).
 */
import { claimDataDir, DataDirInUseError } from './data-dir-lock.js';

const kinds: Record<string, number> = {};
let taken = 0;
for (let i = 0; i < Number(process.argv[3]); i++) {
  try {
    claimDataDir(process.argv[2]!)();
    taken++;
  } catch (e) {
    const kind = e instanceof DataDirInUseError ? (/another aalis daemon is starting|is not a regular file|is running on the data directory|was taken and given up/.exec(e.message)?.[0] ?? e.message.slice(0, 60)) : `not refused as in use: ${(e as Error).message}`;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
}
process.stdout.write(`${JSON.stringify({ taken, kinds })}\n`);

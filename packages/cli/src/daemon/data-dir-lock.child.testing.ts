/*
 * Run by data-dir-lock.test.ts, in a pid namespace of its own: takes the data directory's lock as
 * a daemon would, says so on stdout, and holds it until killed.
 */
import { claimDataDir } from './data-dir-lock.js';

claimDataDir(process.argv[2]!);
process.stdout.write(`held ${process.pid}\n`);
setInterval(() => {}, 60_000);

/*
 * The pattern half of the scan before a run (scan.ts's findPatternMatches) for a workspace of a
 * few files, three ways interleaved in one process: given again after a check of every directory
 * it listed (scan-reuse.ts), answered from the kept listings (each directory opened and fstat'ed),
 * and read whole. The home walked is this machine's (to 4 levels), as a daemon's would be. Printed:
 * medians, the ratios, how many walks were given again against how many the reusable scans made
 * (a directory changed in the 2 s before a scan, by another program, makes its walk run), and the load.
 * Then, as a one-shot process (`aalis exec`) scans: with nothing kept in memory, its walks read
 * back from the file the last one wrote (scan.reuseFile, scan-reuse-file.ts), against read whole,
 * interleaved in a second loop (forgetting this thread's kept walks would spoil the first's).
 */
import { loadavg, homedir } from 'node:os';
import { makeScene, req } from '../src/scene.testing.js';
import { join } from 'node:path';
import { findPatternMatches, forgetKeptScans, lastReuseFile, scanWalks } from '../src/scan.js';
import { reusedScanCount } from '../src/scan-reuse.js';

const rounds = Number(process.env.BENCH_RUNS ?? 200);
const s = makeScene();
const policy = req(s, ['true']).policy;
// a listing younger than 2 s is never trusted: the scene is made older first
await new Promise((r) => setTimeout(r, 2500));
const ways = {
  reused: {},
  'kept listings': { maxEntries: Number.MAX_SAFE_INTEGER }, // any limit turns reuse off (scan.ts)
  'read whole': { noCache: true },
} as const;
const times: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
const before = reusedScanCount();
const walks = scanWalks(policy, s.ws).length;
for (let i = -5; i < rounds; i++) {
  for (const [name, options] of Object.entries(ways)) {
    const t = performance.now();
    findPatternMatches(policy, options, new Set(), s.ws);
    if (i >= 0) times[name]!.push(performance.now() - t);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const base = med(times['kept listings']!);
console.log(`pattern scan of a ${policy.write.length}-root workspace policy, home ${homedir()} to 4 levels, median of ${rounds} interleaved rounds (load ${loadavg()[0]!.toFixed(1)})`);
for (const [name, xs] of Object.entries(times)) console.log(`  ${name.padEnd(14)} ${med(xs).toFixed(2).padStart(7)} ms   ${(med(xs) / base).toFixed(2)}x kept listings`);
console.log(`  walks given again: ${reusedScanCount() - before} of ${walks * (rounds + 5)}`);

const file = join(s.data, 'cache', 'linux-scan-reuse.json');
const oneShot = { 'from the file': { noCache: true, reuseFile: file }, 'read whole': { noCache: true } } as const;
const shot: Record<string, number[]> = Object.fromEntries(Object.keys(oneShot).map((name) => [name, []]));
let loaded = 0;
const fromFile = reusedScanCount();
for (let i = -5; i < rounds; i++) {
  for (const [name, options] of Object.entries(oneShot)) {
    forgetKeptScans(); // a new process: nothing in memory
    const t = performance.now();
    findPatternMatches(policy, options, new Set(), s.ws);
    if (i >= 0) shot[name]!.push(performance.now() - t);
    if (name === 'from the file' && lastReuseFile()?.kind === 'loaded') loaded++;
  }
}
const whole = med(shot['read whole']!);
console.log(`one-shot process (nothing in memory), median of ${rounds} interleaved rounds (load ${loadavg()[0]!.toFixed(1)}):`);
for (const [name, xs] of Object.entries(shot)) console.log(`  ${name.padEnd(14)} ${med(xs).toFixed(2).padStart(7)} ms   ${(med(xs) / whole).toFixed(2)}x read whole`);
// the home is walked in parts with a file (its listing, then each directory in it): more walks than scanWalks lists
console.log(`  file read back ${loaded} of ${rounds + 5} times; walks (the home's parts counted one by one) given again from it: ${reusedScanCount() - fromFile}, ${((reusedScanCount() - fromFile) / (rounds + 5)).toFixed(1)} a scan`);
s.cleanup();

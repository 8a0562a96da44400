/*
 * Run by tree-index.test.ts in a mount namespace of its own (`unshare -m`), so the tmpfs it
 * mounts inside the watched tree is seen by this process's index and by nothing else on the
 * machine. argv: the tree (with subdirectories x/y and z). Prints one JSON line.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { TreeIndex } from './tree-index.js';

const root = process.argv[2]!;
const index = TreeIndex.start()!;
index.watch(root);
for (let i = 0; i < 500 && index.readyTrees === 0; i++) {
  await index.sync();
  await new Promise((r) => setTimeout(r, 20));
}
const g = (await index.sync())!;
const before = index.unchangedSince(join(root, 'z'), g);
execFileSync('mount', ['-t', 'tmpfs', 'none', join(root, 'z')]);
await index.sync();
const after = index.unchangedSince(join(root, 'z'), g);
index.close();
process.stdout.write(`${JSON.stringify({ before, after })}\n`, () => process.exit(0));

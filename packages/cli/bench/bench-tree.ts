// Workspaces of a given number of files for the benchmarks, made once and kept (a 1,000,000-file
// tree takes minutes to make): under BENCH_TREES, default /var/tmp/aalis-bench (not /tmp: the
// sandbox's /tmp is private). 1,000 directories of 1,000 files, a quarter under node_modules: the
// shallow trees of sandbox-linux's bench/host-model.ts, which makes and keeps them in the same place.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const MAKE = `
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
def fill(base, count):
    made, d = 0, 0
    while made < count:
        p = os.path.join(base, 'd%d' % d); os.makedirs(p, exist_ok=True)
        for i in range(min(1000, count - made)):
            os.close(os.open(os.path.join(p, 'f%d.txt' % i), os.O_CREAT | os.O_WRONLY)); made += 1
        d += 1
fill(os.path.join(root, 'src'), n * 3 // 4)
fill(os.path.join(root, 'node_modules'), n - n * 3 // 4)
open(os.path.join(root, '.ready'), 'w').close()
`;

/** The root of a kept workspace of `files` files, made now if it is not there yet (and saying so). */
export function benchTree(files: number): string {
  const root = join(process.env.BENCH_TREES ?? '/var/tmp/aalis-bench', `ws-shallow-${files}`);
  if (!existsSync(join(root, '.ready'))) {
    const t = performance.now();
    execFileSync('python3', ['-c', MAKE, root, String(files)]);
    console.log(`made a workspace of ${files} files in ${((performance.now() - t) / 1000).toFixed(1)} s (${root}, kept for the next runs)`);
  }
  return root;
}

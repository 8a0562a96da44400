/*
 * The "daemon" commit-kill.test.ts kills at a random moment of its commit: one run under the
 * overlay, its layers in `tmpDir`, whose command writes many small files and replaces one that
 * was there, then the commit.
 */
import { req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir, count] = process.argv.slice(2) as [string, string, string];
const s = JSON.parse(scene) as Scene;
const sb = createLinuxSandbox({ hostModel: 'overlay', tmpDir });
// each file's content names it, 3 KB of it: a partial file shows as a shorter one
const script = `mkdir -p many && i=0; while [ $i -lt ${Number(count)} ]; do n=$(printf %03d $i); yes "content-$n" | head -c 3000 > many/$n.txt; i=$((i+1)); done; yes new | head -c 5000 > edit.txt`;
await sb.run(req(s, ['sh', '-c', script], { policy: workspacePolicy(s), timeoutMs: 120_000 }));
process.stdout.write('committed\n');

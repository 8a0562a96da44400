/*
 * The "daemon" commit-journal.test.ts kills mid-commit: one run under the overlay, its layers in
 * `tmpDir` (another file system than the workspace, so the commit copies through temps), whose
 * command writes a few small files and one large one.
 */
import { req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir] = process.argv.slice(2) as [string, string];
const s = JSON.parse(scene) as Scene;
const sb = createLinuxSandbox({ hostModel: 'overlay', tmpDir });
await sb.run(req(s, ['sh', '-c', 'mkdir -p big && echo a > big/a.txt && head -c 1000000000 /dev/zero > big/large.bin'], { policy: workspacePolicy(s), timeoutMs: 120_000 }));

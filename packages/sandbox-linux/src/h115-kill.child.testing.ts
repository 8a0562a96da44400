/*
 * h115: the "daemon" h115-attack.test.ts kills at a moment of its commit: one run under the
 * overlay, its layers in `tmpDir`, of the script given, then the commit.
 */
import { req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir, script] = process.argv.slice(2) as [string, string, string];
const s = JSON.parse(scene) as Scene;
const sb = createLinuxSandbox({ hostModel: 'overlay', tmpDir });
const r = await sb.run(req(s, ['sh', '-c', script], { policy: workspacePolicy(s), timeoutMs: 120_000 }));
process.stdout.write(`committed exit=${r.exitCode}\n${r.stderr}`);

/*
 * The "daemon" prepared.test.ts kills with SIGKILL while it holds a prepared sandbox: a root
 * daemon's sandbox runs `true` once under the overlay model (run folders in `tmpDir`), then says
 * `prepared` on stdout once the next sandboxes of that policy are set up (its share: two), and waits.
 */
import { workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir] = process.argv.slice(2) as [string, string];
const s = JSON.parse(scene);
// held however long the test takes on a busy machine (the default idle expiry, 30 s, would discard them first)
const sb = createLinuxSandbox({ tmpDir, hostModel: 'overlay', landingSweepMs: 0, prepare: 'on', preparedIdleMs: 600_000 });
await sb.run({ argv: ['true'], cwd: s.ws, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 60_000, policy: workspacePolicy(s) });
await sb.preparationsSettled(); // both of the policy's share set up
process.stdout.write(`prepared ${sb.preparedCounts().prepared}\n`);
setInterval(() => {}, 1000); // held until killed

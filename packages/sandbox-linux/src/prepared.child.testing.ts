/*
 * The "daemon" prepared.test.ts kills with SIGKILL while it holds a prepared sandbox: a root
 * daemon's sandbox runs `true` once under the overlay model (run folders in `tmpDir`), then says
 * `prepared` on stdout once the next sandbox of that policy is set up, and waits.
 */
import { workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir] = process.argv.slice(2) as [string, string];
const s = JSON.parse(scene);
const sb = createLinuxSandbox({ tmpDir, hostModel: 'overlay', landingSweepMs: 0, prepare: 'on' });
await sb.run({ argv: ['true'], cwd: s.ws, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 60_000, policy: workspacePolicy(s) });
const timer = setInterval(() => {
  if (sb.preparedCounts().prepared > 0) {
    clearInterval(timer);
    process.stdout.write('prepared\n');
    setInterval(() => {}, 1000); // held until killed
  }
}, 20);

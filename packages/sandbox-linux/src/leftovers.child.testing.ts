/*
 * The "daemon" that leftovers.test.ts kills mid-run: starts a long sandboxed command (which first
 * drops a marker in the workspace, then sleeps as `sleep <token>`, which the test waits for) under
 * the scene's policy, with run folders in `tmpDir`.
 */
import { createLinuxSandbox } from './service.js';
import { workspacePolicy } from './scene.testing.js';

const [scene, tmpDir, marker, sleep] = process.argv.slice(2) as [string, string, string, string];
const token = sleep.replace(/^--sleep=/, ''); // passed so, or this process would have the token in its argv too
const s = JSON.parse(scene);
// the look model: the marker must reach the host while the command runs (overlay.test.ts: the same under the overlay)
const sb = createLinuxSandbox({ tmpDir, hostModel: 'look' });
await sb.run({
  argv: ['sh', '-c', `touch ${marker}; exec sleep ${token}`],
  cwd: s.ws,
  env: { PATH: '/usr/bin:/bin' },
  timeoutMs: 600_000,
  policy: workspacePolicy(s, { network: 'on' }),
});

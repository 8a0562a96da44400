/*
 * The "daemon" launcher.test.ts kills with SIGKILL mid-run: a root daemon's sandbox (so its runs go
 * through the launcher) running `sleep <token>` under the overlay model, run folders in `tmpDir`.
 */
import { workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir, sleep] = process.argv.slice(2) as [string, string, string];
const token = sleep.replace(/^--sleep=/, ''); // passed so, or this process would have the token in its argv too
const s = JSON.parse(scene);
const sb = createLinuxSandbox({ tmpDir, hostModel: 'overlay', landingSweepMs: 0 });
await sb.run({ argv: ['sh', '-c', `exec sleep ${token}`], cwd: s.ws, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 600_000, policy: workspacePolicy(s) });

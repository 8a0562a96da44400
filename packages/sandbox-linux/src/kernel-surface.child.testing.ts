/*
 * Run by kernel-surface.test.ts as `nobody`: the kernel probe in the sandbox; prints its JSON.
 * argv: the scene, the value to try writing to printk_ratelimit.
 */
import { KERNEL_PROBE } from './kernel-surface.probe.testing.js';
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const r = await createLinuxSandbox().run(req(s, ['python3', '-c', KERNEL_PROBE, process.argv[3]!], { env: { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' } }));
process.stdout.write(r.exitCode === 0 ? r.stdout : JSON.stringify({ failed: r.stderr }), () => process.exit(0));

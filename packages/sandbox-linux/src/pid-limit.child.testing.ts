/*
 * Run by pid-limit.test.ts as `nobody`: the fork loop in a sandbox limited to argv[3] tasks;
 * prints the loop's line. argv: the scene, the fork count.
 */
import { FORK_LOOP } from './pid-limit.probe.testing.js';
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const sb = createLinuxSandbox({ pidLimit: Number(process.argv[4]) });
const r = await sb.run(req(s, ['python3', '-c', FORK_LOOP, process.argv[3]!], { env: { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' } }));
process.stdout.write(r.exitCode === 0 ? r.stdout : `failed: ${r.stderr}`, () => process.exit(0));

/*
 * Run by command-stderr-setup.test.ts as the `nobody` user: one run of `argv` in the scene's
 * workspace. Prints, as JSON, its exit code and stderr, or the error it threw.
 */
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const argv = JSON.parse(process.argv[3]!) as [string, ...string[]];
let out: unknown;
try {
  const r = await createLinuxSandbox().run(req(s, argv, { env: { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' } }));
  out = { exitCode: r.exitCode, stderr: r.stderr };
} catch (e) {
  out = { error: (e as Error).message };
}
process.stdout.write(JSON.stringify(out), () => process.exit(0));

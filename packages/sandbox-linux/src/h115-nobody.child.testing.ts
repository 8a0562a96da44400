/*
 * h115: run by h115-attack.test.ts as the `nobody` user: each script of argv[3] (a JSON object,
 * name -> script) run in the scene's workspace under the daemon-like policy, then committed.
 * Prints, as JSON, name -> { exit, denied, out } (`out`: the start of its stdout and stderr).
 */
import { mainDirLandings, reachPolicyOf } from './reach-policy.testing.js';
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const scripts = JSON.parse(process.argv[3]!) as Record<string, string>;
const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0 });
const policy = reachPolicyOf(s, { extraLandings: mainDirLandings(s.ws, s.home) });
const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' };
const out: Record<string, { exit: number; denied: boolean; out: string }> = {};
for (const [name, script] of Object.entries(scripts)) {
  const r = await sb.run(req(s, ['sh', '-c', script], { env, policy, timeoutMs: 30_000 }));
  out[name] = { exit: r.exitCode ?? -1, denied: r.writeDenied === true, out: `${r.stdout.slice(0, 200)}|${r.stderr.slice(0, 400)}` };
}
await sb.close();
process.stdout.write(JSON.stringify(out), () => process.exit(0));

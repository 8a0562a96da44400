/*
 * Run by landings-unprivileged.test.ts as the `nobody` user: the landings of api-reach's table,
 * the node_modules exception and the hard-linked store, under the policy sandboxPolicyOf builds.
 * Prints, as JSON, for each attempted write 1 where it was refused (at once: the command failed;
 * or at the overlay's commit: reported in the result) and 0 where it was made.
 */
import { sandboxStoreEnv } from '@aalis/api-reach';
import { reachPolicyOf } from './reach-policy.testing.js';
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const store = process.argv[3]!;
const sb = createLinuxSandbox();
const policy = reachPolicyOf(s);
const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C', ...sandboxStoreEnv(s.home, 'linux') };
const plant = async (path: string) => {
  const r = await sb.run(req(s, ['sh', '-c', 'mkdir -p "$(dirname "$1")" && echo planted > "$1"', 'sh', path], { env, policy }));
  return r.exitCode !== 0 || r.writeDenied ? 1 : 0;
};
const out = {
  ordinary: await plant(`${s.ws}/src/nobody.txt`),
  claude: await plant(`${s.ws}/CLAUDE.md`),
  workflow: await plant(`${s.ws}/.github/workflows/ci.yml`),
  hooksNodeModules: await plant(`${s.ws}/.git/hooks/node_modules/x`),
  npx: await plant(`${s.home}/.npm/_npx/abc/cli.js`),
  // the sandbox's own npm cache (its tools are pointed there); the host's ~/.npm is not writable
  npmContent: await plant(`${s.home}/.cache/aalis-sandbox/npm/_cacache/x`),
  hostNpmContent: await plant(`${s.home}/.npm/_cacache/x`),
  store: await plant(store),
};
process.stdout.write(JSON.stringify(out), () => process.exit(0));

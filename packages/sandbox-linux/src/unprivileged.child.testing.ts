/*
 * Run by unprivileged.test.ts as the `nobody` user: the same service, the same scene, no root.
 * Prints what each probe command did, as JSON.
 */
import { createLinuxSandbox } from './service.js';
import { req, type Scene, workspacePolicy } from './scene.testing.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const sb = createLinuxSandbox();
const run = async (cmd: string, network: 'off' | 'on' = 'off') => {
  const r = await sb.run(req(s, ['sh', '-c', cmd], { env: { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' }, policy: workspacePolicy(s, { network }) }));
  return { out: r.stdout.trim(), exit: r.exitCode, denied: r.writeDenied };
};
const out = {
  available: (await sb.probe()).available,
  id: await run('id -u'),
  write: await run('echo ok > src/nobody.txt && cat src/nobody.txt'),
  hook: await run('echo x > .git/hooks/pre-commit'),
  env: await run('cat .env'),
  key: await run(`cat ${s.home}/.ssh/id_ed25519`),
  envrc: await run('echo x > .envrc'),
  network: await run('ip -o link | grep -c tap0', 'on'),
};
process.stdout.write(JSON.stringify(out), () => process.exit(0));

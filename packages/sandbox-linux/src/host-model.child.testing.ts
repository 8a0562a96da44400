/*
 * Run by host-model.test.ts as the `nobody` user: what the daemon cannot list, as an ordinary
 * user meets it. argv: the scene. Prints what each probe did, as JSON.
 */
import { join } from 'node:path';
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const sb = createLinuxSandbox({ scan: { home: s.home }, undoneDir: join(s.root, 'undone'), hostModel: 'look' });
const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' };
const run = async (cmd: string) => {
  const r = await sb.run(req(s, ['sh', '-c', cmd], { env }));
  return { out: r.stdout.trim(), err: r.stderr, exit: r.exitCode };
};
const out = {
  // locked/ is -wx for its owner: the daemon cannot list it, a command that knows the name can read in it
  locked: await run('cat locked/.env 2>&1; ls locked 2>&1; true'),
  // a directory the command makes unlistable, with a landing in it: the look cannot see inside and says so
  look: await run('mkdir -m 0300 sealed && echo x > sealed/.envrc && echo made'),
};
process.stdout.write(JSON.stringify(out), () => process.exit(0));

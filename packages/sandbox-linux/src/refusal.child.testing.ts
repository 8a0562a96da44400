/*
 * Run by refusal-runs.test.ts as the `nobody` user: real sandboxed commands whose refusals are
 * read from their stderr. Prints each result's writeDenied and deniedWrites as JSON. argv: the scene.
 */
import { type Scene, req } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const sb = createLinuxSandbox();
const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' };
const run = async (cmd: string) => {
  const r = await sb.run(req(s, ['sh', '-c', cmd], { env }));
  return { denied: r.writeDenied, paths: r.deniedWrites, stderr: r.stderr };
};
const out = {
  // the host's own permissions (a root-owned directory in the workspace): EACCES, not the sandbox's
  locked: await run('touch src/locked/x'),
  // outside the writable roots: the read-only mount answers EROFS
  outside: await run(`touch ${s.home}/new.txt`),
};
process.stdout.write(JSON.stringify(out));
